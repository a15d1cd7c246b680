import FerryCore
import GRDB

extension SQLiteTables {
    /// The listening library's: podcasts, episodes, catalog songs, playback, Up Next and sync
    /// with phones. A completed transfer that a song or an episode names is hidden from the list
    /// rather than deleted, so it stays downloaded (and playable) while its file is there.
    /// Shipped migrations never change; new ones are appended, with a version after the newest
    /// of every module's.
    package static let listening = SQLiteTables(
        migrations: [
            // The tables of v2, when FerryCore registered every module's migrations: a journal made
            // then has them (so "if not exists"), one made since gets them here, even one a
            // program opened before with the transfer engine's tables alone.
            Migration(2, "v2.1: podcasts, episodes, catalog tracks (v2's, registered by their module)") { db in
                try db.create(table: "podcast", options: .ifNotExists) { t in
                    t.autoIncrementedPrimaryKey("id")
                    t.column("feedURL", .text).notNull().unique()
                    t.column("title", .text).notNull()
                    t.column("author", .text)
                    t.column("descriptionText", .text)
                    t.column("descriptionHTML", .text)
                    t.column("artworkURL", .text)
                    t.column("link", .text)
                    t.column("folder", .text).notNull()
                    t.column("catalogId", .integer)
                    t.column("etag", .text)
                    t.column("lastModified", .text)
                    t.column("refreshedAt", .datetime)
                    t.column("errorCode", .text)
                    t.column("errorMessage", .text)
                    t.column("autoDownload", .integer).notNull().defaults(to: 0)
                    t.column("keepLatest", .integer)
                    t.column("createdAt", .datetime).notNull()
                    t.column("updatedAt", .datetime).notNull()
                }
                try db.create(table: "episode", options: .ifNotExists) { t in
                    t.autoIncrementedPrimaryKey("id")
                    t.belongsTo("podcast", onDelete: .cascade).notNull()
                    t.column("guid", .text).notNull()
                    t.column("title", .text).notNull()
                    t.column("published", .datetime)
                    t.column("duration", .double)
                    t.column("enclosureURL", .text)
                    t.column("enclosureLength", .integer)
                    t.column("enclosureType", .text)
                    t.column("descriptionHTML", .text)
                    t.column("descriptionText", .text)
                    t.column("season", .integer)
                    t.column("episodeNumber", .integer)
                    t.column("episodeType", .text)
                    t.column("explicit", .boolean)
                    t.column("link", .text)
                    t.column("artworkURL", .text)
                    t.column("chaptersURL", .text)
                    t.column("transcriptURL", .text)
                    t.column("transferId", .integer)
                    t.column("filePath", .text)
                    t.column("isNew", .boolean).notNull().defaults(to: true)
                    t.column("firstSeenAt", .datetime).notNull()
                    t.uniqueKey(["podcastId", "guid"])
                }
                try db.create(index: "episode_transfer", on: "episode", columns: ["transferId"], options: .ifNotExists)
                try db.create(table: "track", options: .ifNotExists) { t in
                    t.primaryKey("trackId", .integer)
                    t.column("transferId", .integer)
                    t.column("title", .text).notNull()
                    t.column("artist", .text)
                    t.column("collection", .text)
                    t.column("artworkURL", .text)
                    t.column("previewURL", .text)
                    t.column("durationSeconds", .double)
                    t.column("createdAt", .datetime).notNull()
                }
            },
            Migration(6, "v6: private feeds' credentials") { db in
                try db.alter(table: "podcast") { t in
                    t.add(column: "username", .text)
                    t.add(column: "password", .text)
                }
            },
            Migration(11, "v11: where the listener is in each episode and song") { db in
                try db.create(table: "playback") { t in
                    t.column("media", .text).notNull()
                    t.column("mediaId", .integer).notNull()
                    t.column("positionSeconds", .double).notNull()
                    t.column("played", .boolean).notNull()
                    t.column("updatedAt", .datetime).notNull()
                    t.primaryKey(["media", "mediaId"])
                }
            },
            Migration(12, "v12: a podcast's speed and order") { db in
                try db.alter(table: "podcast") { t in
                    t.add(column: "playbackSpeed", .double)
                    t.add(column: "oldestFirst", .boolean).notNull().defaults(to: false)
                }
            },
            Migration(13, "v13: Up Next") { db in
                try db.create(table: "upNext") { t in
                    t.primaryKey("rank", .integer)
                    t.column("media", .text).notNull()
                    t.column("mediaId", .integer).notNull()
                }
            },
            Migration(14, "v14: sync with phones (the gpodder.net API)") { db in
                try db.create(table: "syncUser") { t in
                    t.primaryKey("name", .text)
                    t.column("passwordHash", .text).notNull()
                    t.column("createdAt", .datetime).notNull()
                }
                try db.create(table: "syncDevice") { t in
                    t.column("user", .text).notNull()
                    t.column("deviceId", .text).notNull()
                    t.column("caption", .text).notNull()
                    t.column("type", .text).notNull()
                    t.column("updatedAt", .datetime).notNull()
                    t.primaryKey(["user", "deviceId"])
                }
                try db.create(table: "syncPending") { t in
                    t.primaryKey("url", .text)
                    t.column("addedAt", .integer).notNull()
                    t.column("errorMessage", .text)
                }
                try db.create(table: "syncSubscriptionChange") { t in
                    t.autoIncrementedPrimaryKey("seq")
                    t.column("url", .text).notNull()
                    t.column("added", .boolean).notNull()
                    t.column("at", .integer).notNull().indexed()
                }
                // Every subscription made or ended anywhere (web app, CLI, OPML, a moved feed) is a change a phone asks for.
                let now = "CAST(strftime('%s', 'now') AS INTEGER)"
                try db.execute(sql: """
                    CREATE TRIGGER podcast_subscribed AFTER INSERT ON podcast BEGIN
                        INSERT INTO syncSubscriptionChange (url, added, at) VALUES (NEW.feedURL, 1, \(now));
                    END;
                    CREATE TRIGGER podcast_unsubscribed AFTER DELETE ON podcast BEGIN
                        INSERT INTO syncSubscriptionChange (url, added, at) VALUES (OLD.feedURL, 0, \(now));
                    END;
                    CREATE TRIGGER podcast_moved AFTER UPDATE OF feedURL ON podcast WHEN OLD.feedURL != NEW.feedURL BEGIN
                        INSERT INTO syncSubscriptionChange (url, added, at) VALUES (OLD.feedURL, 0, \(now)), (NEW.feedURL, 1, \(now));
                    END;
                    """)
                try db.create(table: "syncEpisodeAction") { t in
                    t.autoIncrementedPrimaryKey("seq")
                    t.column("podcast", .text).notNull()
                    t.column("episode", .text).notNull()
                    t.column("guid", .text)
                    t.column("device", .text)
                    t.column("action", .text).notNull()
                    t.column("timestamp", .integer).notNull()
                    t.column("started", .integer)
                    t.column("position", .integer)
                    t.column("total", .integer)
                    t.column("receivedAt", .integer).notNull().indexed()
                }
                try db.create(index: "syncEpisodeAction_episode", on: "syncEpisodeAction", columns: ["podcast", "episode"])
            },
            Migration(15, "v15: a podcast's own refresh interval") { db in
                try db.alter(table: "podcast") { t in t.add(column: "refreshMinutes", .integer) }
            },
            Migration(17, "v17: accounts (the sync users, with a role), their web sessions and API tokens") { db in
                try db.rename(table: "syncUser", to: "account")
                // Today's sync users were phones of the household: members, not admins.
                try db.alter(table: "account") { t in t.add(column: "role", .text).notNull().defaults(to: "member") }
                // A session's or a token's secret is never kept: its SHA-256 is the key.
                try db.create(table: "accountCredential") { t in
                    t.primaryKey("hash", .text)
                    t.column("id", .text).notNull().unique()
                    t.column("user", .text).notNull().indexed()
                    t.column("kind", .text).notNull()
                    t.column("createdAt", .datetime).notNull()
                    t.column("lastUsedAt", .datetime)
                    t.column("expiresAt", .datetime)
                    t.column("label", .text)
                    t.column("address", .text)
                }
            },
            Migration(19, "v19: one library, a place of one's own: each listener's subscriptions, playback, Up Next and phone sync") { db in
                // Listeners then: the machine's owner and every account. Each gets what everyone shared, so nobody loses a place.
                let listeners = "(SELECT '' AS name UNION SELECT name FROM account)"
                try db.create(table: "subscription") { t in
                    t.column("listener", .text).notNull()
                    t.belongsTo("podcast", onDelete: .cascade).notNull()
                    t.column("autoDownload", .integer).notNull().defaults(to: 0)
                    t.column("keepLatest", .integer)
                    t.column("playbackSpeed", .double)
                    t.column("oldestFirst", .boolean).notNull().defaults(to: false)
                    t.column("createdAt", .datetime).notNull()
                    t.primaryKey(["listener", "podcastId"])
                }
                try db.execute(sql: """
                    INSERT INTO subscription (listener, podcastId, autoDownload, keepLatest, playbackSpeed, oldestFirst, createdAt)
                        SELECT l.name, p.id, p.autoDownload, p.keepLatest, p.playbackSpeed, p.oldestFirst, p.createdAt FROM podcast p, \(listeners) l;
                    ALTER TABLE podcast DROP COLUMN playbackSpeed;
                    ALTER TABLE podcast DROP COLUMN oldestFirst;

                    CREATE TABLE playbackByListener (
                        listener TEXT NOT NULL, media TEXT NOT NULL, mediaId INTEGER NOT NULL, positionSeconds DOUBLE NOT NULL,
                        played BOOLEAN NOT NULL, updatedAt DATETIME NOT NULL, PRIMARY KEY (listener, media, mediaId));
                    INSERT INTO playbackByListener SELECT l.name, p.media, p.mediaId, p.positionSeconds, p.played, p.updatedAt FROM playback p, \(listeners) l;
                    DROP TABLE playback;
                    ALTER TABLE playbackByListener RENAME TO playback;

                    CREATE TABLE upNextByListener (
                        listener TEXT NOT NULL, rank INTEGER NOT NULL, media TEXT NOT NULL, mediaId INTEGER NOT NULL, PRIMARY KEY (listener, rank));
                    INSERT INTO upNextByListener SELECT l.name, u.rank, u.media, u.mediaId FROM upNext u, \(listeners) l;
                    DROP TABLE upNext;
                    ALTER TABLE upNextByListener RENAME TO upNext;

                    CREATE TABLE syncPendingByListener (
                        listener TEXT NOT NULL, url TEXT NOT NULL, addedAt INTEGER NOT NULL, errorMessage TEXT, PRIMARY KEY (listener, url));
                    INSERT INTO syncPendingByListener SELECT a.name, s.url, s.addedAt, s.errorMessage FROM syncPending s, account a;
                    DROP TABLE syncPending;
                    ALTER TABLE syncPendingByListener RENAME TO syncPending;

                    ALTER TABLE syncSubscriptionChange ADD COLUMN listener TEXT NOT NULL DEFAULT '';
                    INSERT INTO syncSubscriptionChange (listener, url, added, at)
                        SELECT a.name, c.url, c.added, c.at FROM syncSubscriptionChange c, account a WHERE c.listener = '' ORDER BY c.seq;
                    CREATE INDEX syncSubscriptionChange_listener ON syncSubscriptionChange (listener, at);

                    ALTER TABLE syncEpisodeAction ADD COLUMN listener TEXT NOT NULL DEFAULT '';
                    INSERT INTO syncEpisodeAction (listener, podcast, episode, guid, device, action, timestamp, started, position, total, receivedAt)
                        SELECT a.name, s.podcast, s.episode, s.guid, s.device, s.action, s.timestamp, s.started, s.position, s.total, s.receivedAt
                        FROM syncEpisodeAction s, account a WHERE s.listener = '' ORDER BY s.seq;
                    CREATE INDEX syncEpisodeAction_listener ON syncEpisodeAction (listener, receivedAt);

                    DROP TRIGGER podcast_subscribed;
                    DROP TRIGGER podcast_unsubscribed;
                    DROP TRIGGER podcast_moved;
                    """)
                // A listener's subscriptions made or ended anywhere (web app, CLI, OPML, a phone, a
                // moved feed) are changes their phones ask for. (A podcast deleted with subscribers
                // has them deleted first, while its URL can still be read.)
                let now = "CAST(strftime('%s', 'now') AS INTEGER)"
                try db.execute(sql: """
                    CREATE TRIGGER subscription_added AFTER INSERT ON subscription BEGIN
                        INSERT INTO syncSubscriptionChange (listener, url, added, at) SELECT NEW.listener, feedURL, 1, \(now) FROM podcast WHERE id = NEW.podcastId;
                    END;
                    CREATE TRIGGER subscription_ended AFTER DELETE ON subscription BEGIN
                        INSERT INTO syncSubscriptionChange (listener, url, added, at) SELECT OLD.listener, feedURL, 0, \(now) FROM podcast WHERE id = OLD.podcastId;
                    END;
                    CREATE TRIGGER podcast_moved AFTER UPDATE OF feedURL ON podcast WHEN OLD.feedURL != NEW.feedURL BEGIN
                        INSERT INTO syncSubscriptionChange (listener, url, added, at) SELECT listener, OLD.feedURL, 0, \(now) FROM subscription WHERE podcastId = NEW.id;
                        INSERT INTO syncSubscriptionChange (listener, url, added, at) SELECT listener, NEW.feedURL, 1, \(now) FROM subscription WHERE podcastId = NEW.id;
                    END;
                    """)
            },
            Migration(22, "v22: when the feed stopped listing an episode") { db in
                try db.alter(table: "episode") { t in t.add(column: "goneSince", .datetime) }
            },
            Migration(26, "v26: the Podcasting 2.0 fields of shows and episodes (JSON)") { db in
                try db.alter(table: "episode") { t in t.add(column: "podcasting", .jsonText) }
                try db.alter(table: "podcast") { t in t.add(column: "podcasting", .jsonText) }
            },
            Migration(27, "v27: each listener's bookmarks") { db in
                try db.execute(sql: """
                    CREATE TABLE bookmark (
                        id INTEGER PRIMARY KEY AUTOINCREMENT, listener TEXT NOT NULL, media TEXT NOT NULL, mediaId INTEGER NOT NULL,
                        seconds DOUBLE NOT NULL, note TEXT, createdAt DATETIME NOT NULL
                    );
                    CREATE INDEX bookmark_item ON bookmark (listener, media, mediaId);
                    -- A forgotten episode takes its bookmarks with it (a bookmark keeps it from being forgotten).
                    CREATE TRIGGER episode_bookmarks AFTER DELETE ON episode BEGIN
                        DELETE FROM bookmark WHERE media = 'episode' AND mediaId = OLD.id;
                    END;
                    """)
            },
            Migration(28, "v28: transcripts indexed for search (FTS5)") { db in
                try db.execute(sql: """
                    -- Which transcript each episode's lines came from, or why it could not be read.
                    CREATE TABLE transcriptIndex (
                        episodeId INTEGER PRIMARY KEY REFERENCES episode (id) ON DELETE CASCADE, url TEXT NOT NULL,
                        claimedAt DATETIME, indexedAt DATETIME, cueCount INTEGER NOT NULL DEFAULT 0,
                        errorCode TEXT, errorMessage TEXT, attempts INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE TABLE transcriptCue (
                        id INTEGER PRIMARY KEY, episodeId INTEGER NOT NULL REFERENCES transcriptIndex (episodeId) ON DELETE CASCADE,
                        startSeconds DOUBLE NOT NULL, speaker TEXT, body TEXT NOT NULL
                    );
                    CREATE INDEX transcriptCue_episode ON transcriptCue (episodeId);
                    -- The words' index over transcriptCue's text, which it does not store again.
                    CREATE VIRTUAL TABLE transcriptText USING fts5 (
                        body, content = 'transcriptCue', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
                    );
                    CREATE TRIGGER transcriptCue_added AFTER INSERT ON transcriptCue BEGIN
                        INSERT INTO transcriptText (rowid, body) VALUES (NEW.id, NEW.body);
                    END;
                    CREATE TRIGGER transcriptCue_removed AFTER DELETE ON transcriptCue BEGIN
                        INSERT INTO transcriptText (transcriptText, rowid, body) VALUES ('delete', OLD.id, OLD.body);
                    END;
                    """)
            },
            Migration(29, "v29: each listener's playlists") { db in
                try db.execute(sql: """
                    CREATE TABLE playlist (
                        id INTEGER PRIMARY KEY AUTOINCREMENT, listener TEXT NOT NULL, name TEXT NOT NULL,
                        createdAt DATETIME NOT NULL, updatedAt DATETIME NOT NULL, UNIQUE (listener, name)
                    );
                    CREATE TABLE playlistItem (
                        playlistId INTEGER NOT NULL REFERENCES playlist (id) ON DELETE CASCADE, rank INTEGER NOT NULL,
                        media TEXT NOT NULL, mediaId INTEGER NOT NULL, PRIMARY KEY (playlistId, rank)
                    );
                    CREATE INDEX playlistItem_item ON playlistItem (media, mediaId);
                    -- A forgotten episode leaves the playlists (being in one keeps it from being forgotten).
                    CREATE TRIGGER episode_playlistItems AFTER DELETE ON episode BEGIN
                        DELETE FROM playlistItem WHERE media = 'episode' AND mediaId = OLD.id;
                    END;
                    """)
            },
            Migration(30, "v30: which of an episode's files a podcast's downloads take") { db in
                try db.alter(table: "podcast") { t in t.add(column: "enclosureChoice", .text) }
            },
            Migration(31, "v31: subscriptions deleted through the Open Podcast API") { db in
                try db.alter(table: "syncSubscriptionChange") { t in t.add(column: "deleted", .boolean).notNull().defaults(to: false) }
            },
        ],
        namesTransfer: { db, id in
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM track WHERE transferId = ?) OR EXISTS (SELECT 1 FROM episode WHERE transferId = ?)",
                arguments: [id, id]
            ) ?? false
        }
    )
}
