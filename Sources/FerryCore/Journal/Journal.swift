import FerryKit
import Foundation
import GRDB
import Synchronization

/// The crash-safe record of every transfer and every event, in SQLite (WAL).
///
/// All writes are single transactions, so the journal is consistent whatever moment the process
/// dies at. ``TransferJournal`` is what it shares with the PostgreSQL journal; the rest (a
/// podcast's tables, the boot id) is the embedded daemon's.
public struct Journal: TransferJournal {
    package let writer: any DatabaseWriter
    let committed = CommittedEvents()

    /// Opens (creating if needed) the journal file and brings its schema up to date.
    public static func open(at url: URL) throws -> Journal {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // WAL with NORMAL sync survives any process crash; on power loss the newest
            // transactions may be lost, which the resume protocol tolerates (durable byte counts
            // only go backwards, and recovery repairs an interrupted move into the library).
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        return try Journal(DatabasePool(path: url.path, configuration: configuration))
    }

    /// Calls `handler` with every event journaled from now on, once its transaction commits.
    /// Calls come from the journal's writer, one at a time, in commit order, which is `seq`
    /// order; a handler must return quickly.
    public func onCommit(_ handler: @escaping @Sendable (TransferEvent) -> Void) {
        committed.add(handler)
    }

    /// A journal in memory, for tests.
    public static func inMemory() throws -> Journal {
        try Journal(DatabaseQueue())
    }

    init(_ writer: any DatabaseWriter) throws {
        self.writer = writer
        try Self.migrator.migrate(writer)
    }

    /// Shipped migrations never change; new ones are appended.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: transfers, events, sessions") { db in
            try db.create(table: "transfer") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("session", .text).notNull()
                t.column("url", .text).notNull()
                t.column("state", .text).notNull()
                t.column("folder", .text).notNull()
                t.column("suggestedName", .text)
                t.column("taskDescription", .text)
                t.column("nameHint", .text)
                t.column("fileName", .text)
                t.column("durableBytes", .integer).notNull().defaults(to: 0)
                t.column("totalBytes", .integer)
                t.column("validator", .text)
                t.column("sha256", .text)
                t.column("errorCode", .text)
                t.column("errorMessage", .text)
                t.column("attempts", .integer).notNull().defaults(to: 0)
                t.column("failures", .integer).notNull().defaults(to: 0)
                t.column("retryAt", .datetime)
                t.column("keepsPartFile", .boolean).notNull().defaults(to: false)
                t.column("createdAt", .datetime).notNull()
                t.column("updatedAt", .datetime).notNull()
                t.column("completedAt", .datetime)
            }
            try db.create(index: "transfer_session_url", on: "transfer", columns: ["session", "url"])
            try db.create(index: "transfer_state", on: "transfer", columns: ["state", "id"])
            // AUTOINCREMENT: a sequence number is never reused, even after pruning, so a
            // client's Last-Event-ID always means the same point in history.
            try db.execute(sql: """
                CREATE TABLE event (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    session TEXT NOT NULL,
                    transferId INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    createdAt DATETIME NOT NULL
                )
                """)
            try db.create(index: "event_session_seq", on: "event", columns: ["session", "seq"])
            try db.create(table: "session") { t in
                t.primaryKey("name", .text)
                t.column("acknowledgedSeq", .integer).notNull().defaults(to: 0)
            }
        }
        migrator.registerMigration("v2: preferred names, podcasts, episodes, catalog tracks") { db in
            try db.alter(table: "transfer") { t in
                t.add(column: "preferredName", .text)
            }
            try db.create(table: "podcast") { t in
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
            try db.create(table: "episode") { t in
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
            try db.create(index: "episode_transfer", on: "episode", columns: ["transferId"])
            try db.create(table: "track") { t in
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
        }
        migrator.registerMigration("v3: uploads, transfer options, session configuration") { db in
            try db.alter(table: "transfer") { t in
                t.add(column: "kind", .text).notNull().defaults(to: TransferKind.download.rawValue)
                t.add(column: "method", .text)
                t.add(column: "sourcePath", .text)
                t.add(column: "sourceIdentity", .text)
                t.add(column: "formField", .text)
                t.add(column: "uploadProtocol", .text)
                t.add(column: "uploadURL", .text)
                t.add(column: "responseStatus", .integer)
                t.add(column: "responseHeaders", .text)
                t.add(column: "responseBody", .text)
                t.add(column: "options", .text)
                t.add(column: "startAfter", .datetime)
            }
            try db.alter(table: "session") { t in
                t.add(column: "options", .text)
            }
        }
        migrator.registerMigration("v4: the boot the daemon last ran in") { db in
            try db.create(table: "daemon") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
            }
        }
        migrator.registerMigration("v5: retrying becomes waiting, with its reason and since when") { db in
            try db.alter(table: "transfer") { t in
                t.add(column: "waitReason", .text)
                t.add(column: "waitingSince", .datetime)
                t.add(column: "waitsForNetwork", .boolean).notNull().defaults(to: false)
            }
            try db.execute(sql: "UPDATE transfer SET state = 'waiting', waitingSince = updatedAt WHERE state = 'retrying'")
            try db.execute(sql: """
                UPDATE event SET kind = 'waiting', payload = json_set(payload, '$.kind', 'waiting') WHERE kind = 'retrying'
                """)
        }
        migrator.registerMigration("v6: private feeds' credentials") { db in
            try db.alter(table: "podcast") { t in
                t.add(column: "username", .text)
                t.add(column: "password", .text)
            }
        }
        migrator.registerMigration("v7: segmented downloads' ranges") { db in
            try db.alter(table: "transfer") { t in t.add(column: "segments", .text) }
        }
        migrator.registerMigration("v8: mirrors") { db in
            try db.alter(table: "transfer") { t in t.add(column: "mirrors", .text) }
        }
        migrator.registerMigration("v9: destinations, checksums, priorities") { db in
            try db.alter(table: "transfer") { t in
                t.add(column: "directory", .text)
                t.add(column: "outputName", .text)
                t.add(column: "overwrite", .boolean).notNull().defaults(to: false)
                t.add(column: "checksum", .text)
                t.add(column: "serverDigest", .text)
                t.add(column: "verifiedBy", .text)
                t.add(column: "priority", .integer).notNull().defaults(to: 0)
                t.add(column: "queueRank", .integer)
            }
        }
        migrator.registerMigration("v10: transfers removed from the list but kept for the library") { db in
            try db.alter(table: "transfer") { t in t.add(column: "hidden", .boolean).notNull().defaults(to: false) }
        }
        migrator.registerMigration("v11: where the listener is in each episode and song") { db in
            try db.create(table: "playback") { t in
                t.column("media", .text).notNull()
                t.column("mediaId", .integer).notNull()
                t.column("positionSeconds", .double).notNull()
                t.column("played", .boolean).notNull()
                t.column("updatedAt", .datetime).notNull()
                t.primaryKey(["media", "mediaId"])
            }
        }
        migrator.registerMigration("v12: a podcast's speed and order") { db in
            try db.alter(table: "podcast") { t in
                t.add(column: "playbackSpeed", .double)
                t.add(column: "oldestFirst", .boolean).notNull().defaults(to: false)
            }
        }
        migrator.registerMigration("v13: Up Next") { db in
            try db.create(table: "upNext") { t in
                t.primaryKey("rank", .integer)
                t.column("media", .text).notNull()
                t.column("mediaId", .integer).notNull()
            }
        }
        migrator.registerMigration("v14: sync with phones (the gpodder.net API)") { db in
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
        }
        migrator.registerMigration("v15: a podcast's own refresh interval") { db in
            try db.alter(table: "podcast") { t in t.add(column: "refreshMinutes", .integer) }
        }
        migrator.registerMigration("v16: aria2 GIDs chosen by clients") { db in
            try db.create(table: "aria2Gid") { t in
                t.primaryKey("gid", .text)
                t.column("transferId", .integer).notNull().unique().references("transfer", onDelete: .cascade)
            }
        }
        return migrator
    }
}

/// The handlers of ``Journal/onCommit(_:)``. Events are handed over from the writer's queue
/// after each commit rather than by whoever wrote them once their write returned: two workers'
/// events could overtake each other that way, and an event stream, which skips sequence numbers
/// it has passed, then lost the earlier one.
///
/// The events of one transaction wait together, behind one commit observer: GRDB asks every
/// observer about every statement, so one observer per event made a transaction of 10,000
/// new transfers quadratic (most of the time of queueing them).
final class CommittedEvents: Sendable {
    private let handlers = Mutex<[@Sendable (TransferEvent) -> Void]>([])
    /// Events of the transaction in progress (writes are serialized: there is one at a time).
    private let pending = Mutex<[TransferEvent]>([])

    func add(_ handler: @escaping @Sendable (TransferEvent) -> Void) {
        handlers.withLock { $0.append(handler) }
    }

    /// Hands `event` to the handlers when the transaction of `db` commits.
    func send(_ event: TransferEvent, after db: Database) {
        let handlers = handlers.withLock { $0 }
        guard !handlers.isEmpty else { return }
        let first = pending.withLock { pending in
            pending.append(event)
            return pending.count == 1
        }
        guard first else { return }
        db.afterNextTransaction(
            onCommit: { [self] _ in
                let events = self.pending.withLock { pending in
                    defer { pending = [] }
                    return pending
                }
                for event in events {
                    for handler in handlers { handler(event) }
                }
            },
            onRollback: { [self] _ in self.pending.withLock { $0 = [] } }
        )
    }
}
