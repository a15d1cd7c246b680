import Logging
import PostgresNIO

/// The PostgreSQL journal's versioned migrations. Shipped ones never change; new ones are
/// appended. Members that start together take turns (an advisory lock), so each migration runs
/// once, in its own transaction, recorded in `ferry_migration`.
enum PostgresSchema {
    struct Migration {
        var version: Int
        var name: String
        var statements: [String]
    }

    /// The advisory lock keys Ferry takes (pg_advisory_lock's one bigint), one per purpose.
    enum Lock: Int64 {
        case migrations = 0x4665_7272_7901
        /// Held by each transaction that journals events, so sequence numbers are committed
        /// in order: a reader that has seen `seq` has seen every event before it.
        case events = 0x4665_7272_7902
        /// Held by each claim, so that claims take turns and sessions' limits hold.
        case claims = 0x4665_7272_7903
        /// Held by the member refreshing feeds (and subscribing to what phones added).
        case refreshTurn = 0x4665_7272_7904
        /// With a podcast's id (two int4 keys): held while that podcast's feed is fetched.
        static let podcastRefresh: Int32 = 0x4665_7201
    }

    static let migrations: [Migration] = [
        Migration(
            version: 1, name: "transfers, events, sessions",
            statements: [
                """
                CREATE TABLE transfer (
                    id BIGSERIAL PRIMARY KEY,
                    "session" TEXT NOT NULL, url TEXT NOT NULL, state TEXT NOT NULL, folder TEXT NOT NULL,
                    "suggestedName" TEXT, "preferredName" TEXT, "taskDescription" TEXT, "nameHint" TEXT, "fileName" TEXT,
                    "durableBytes" BIGINT NOT NULL DEFAULT 0, "totalBytes" BIGINT, validator TEXT, sha256 TEXT,
                    "errorCode" TEXT, "errorMessage" TEXT, attempts BIGINT NOT NULL DEFAULT 0, failures BIGINT NOT NULL DEFAULT 0,
                    "retryAt" TIMESTAMPTZ, "keepsPartFile" BOOLEAN NOT NULL DEFAULT FALSE,
                    "createdAt" TIMESTAMPTZ NOT NULL, "updatedAt" TIMESTAMPTZ NOT NULL, "completedAt" TIMESTAMPTZ,
                    kind TEXT NOT NULL DEFAULT 'download', method TEXT, "sourcePath" TEXT, "sourceIdentity" TEXT, "formField" TEXT,
                    "uploadProtocol" TEXT, "uploadURL" TEXT, "responseStatus" BIGINT, "responseHeaders" TEXT, "responseBody" TEXT,
                    options TEXT, "startAfter" TIMESTAMPTZ, "waitReason" TEXT, "waitingSince" TIMESTAMPTZ,
                    "waitsForNetwork" BOOLEAN NOT NULL DEFAULT FALSE, segments TEXT, mirrors TEXT, directory TEXT, "outputName" TEXT,
                    overwrite BOOLEAN NOT NULL DEFAULT FALSE, checksum TEXT, "serverDigest" TEXT, "verifiedBy" TEXT,
                    priority BIGINT NOT NULL DEFAULT 0, "queueRank" BIGINT, hidden BOOLEAN NOT NULL DEFAULT FALSE
                )
                """,
                #"CREATE INDEX transfer_session_url ON transfer ("session", url)"#,
                "CREATE INDEX transfer_state ON transfer (state)",
                """
                CREATE TABLE event (
                    seq BIGSERIAL PRIMARY KEY, "session" TEXT NOT NULL, "transferId" BIGINT NOT NULL, kind TEXT NOT NULL,
                    payload TEXT NOT NULL, "createdAt" TIMESTAMPTZ NOT NULL
                )
                """,
                #"CREATE INDEX event_session_seq ON event ("session", seq)"#,
                #"CREATE TABLE session (name TEXT PRIMARY KEY, "acknowledgedSeq" BIGINT NOT NULL DEFAULT 0, options TEXT)"#,
            ]
        ),
        Migration(
            version: 2, name: "members and leases",
            statements: [
                """
                CREATE TABLE member (
                    id TEXT PRIMARY KEY, address TEXT, "startedAt" TIMESTAMPTZ NOT NULL, "heartbeatAt" TIMESTAMPTZ NOT NULL
                )
                """,
                #"ALTER TABLE transfer ADD COLUMN "owner" TEXT, ADD COLUMN "leaseExpires" TIMESTAMPTZ, ADD COLUMN fence BIGINT NOT NULL DEFAULT 0"#,
                #"CREATE INDEX transfer_queue ON transfer (state, priority DESC, (COALESCE("queueRank", id)), id)"#,
            ]
        ),
        Migration(
            version: 3, name: "the listening library",
            statements: [
                // Podcasts, episodes and catalog songs are their records' JSON (dates in seconds
                // since 1970); the columns queries need are generated from it, so a field added to
                // a record needs no migration and a column can never disagree with its record.
                """
                CREATE TABLE podcast (
                    id BIGSERIAL PRIMARY KEY, record JSONB NOT NULL,
                    "feedURL" TEXT GENERATED ALWAYS AS (record->>'feedURL') STORED NOT NULL UNIQUE
                )
                """,
                """
                CREATE TABLE episode (
                    id BIGSERIAL PRIMARY KEY, record JSONB NOT NULL,
                    "podcastId" BIGINT GENERATED ALWAYS AS ((record->>'podcastId')::bigint) STORED NOT NULL
                        REFERENCES podcast (id) ON DELETE CASCADE,
                    guid TEXT GENERATED ALWAYS AS (record->>'guid') STORED NOT NULL,
                    "transferId" BIGINT GENERATED ALWAYS AS ((record->>'transferId')::bigint) STORED,
                    UNIQUE ("podcastId", guid)
                )
                """,
                #"CREATE INDEX episode_transfer ON episode ("transferId")"#,
                "CREATE TABLE track (\"trackId\" BIGINT PRIMARY KEY, record JSONB NOT NULL)",
                """
                CREATE TABLE playback (
                    media TEXT NOT NULL, "mediaId" BIGINT NOT NULL, "positionSeconds" DOUBLE PRECISION NOT NULL,
                    played BOOLEAN NOT NULL, "updatedAt" TIMESTAMPTZ NOT NULL, PRIMARY KEY (media, "mediaId")
                )
                """,
                #"CREATE TABLE "upNext" (rank BIGINT PRIMARY KEY, media TEXT NOT NULL, "mediaId" BIGINT NOT NULL)"#,
                #"CREATE TABLE "syncUser" (name TEXT PRIMARY KEY, "passwordHash" TEXT NOT NULL, "createdAt" TIMESTAMPTZ NOT NULL)"#,
                """
                CREATE TABLE "syncDevice" (
                    "user" TEXT NOT NULL, "deviceId" TEXT NOT NULL, caption TEXT NOT NULL, type TEXT NOT NULL,
                    "updatedAt" TIMESTAMPTZ NOT NULL, PRIMARY KEY ("user", "deviceId")
                )
                """,
                #"CREATE TABLE "syncPending" (url TEXT PRIMARY KEY, "addedAt" BIGINT NOT NULL, "errorMessage" TEXT)"#,
                #"CREATE TABLE "syncSubscriptionChange" (seq BIGSERIAL PRIMARY KEY, url TEXT NOT NULL, added BOOLEAN NOT NULL, at BIGINT NOT NULL)"#,
                #"CREATE INDEX sync_subscription_change_at ON "syncSubscriptionChange" (at)"#,
                // Every subscription made or ended on any member (web app, CLI, OPML, a moved feed)
                // is a change a phone asks for.
                """
                CREATE FUNCTION ferry_log_subscription() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    now BIGINT := EXTRACT(EPOCH FROM now())::bigint;
                BEGIN
                    IF TG_OP IN ('DELETE', 'UPDATE') THEN
                        INSERT INTO "syncSubscriptionChange" (url, added, at) VALUES (OLD."feedURL", FALSE, now);
                    END IF;
                    IF TG_OP IN ('INSERT', 'UPDATE') THEN
                        INSERT INTO "syncSubscriptionChange" (url, added, at) VALUES (NEW."feedURL", TRUE, now);
                    END IF;
                    RETURN NULL;
                END $$
                """,
                """
                CREATE TRIGGER podcast_subscription AFTER INSERT OR DELETE ON podcast
                    FOR EACH ROW EXECUTE FUNCTION ferry_log_subscription()
                """,
                """
                CREATE TRIGGER podcast_moved AFTER UPDATE ON podcast
                    FOR EACH ROW WHEN (OLD."feedURL" IS DISTINCT FROM NEW."feedURL") EXECUTE FUNCTION ferry_log_subscription()
                """,
                """
                CREATE TABLE "syncEpisodeAction" (
                    seq BIGSERIAL PRIMARY KEY, podcast TEXT NOT NULL, episode TEXT NOT NULL, guid TEXT, device TEXT,
                    action TEXT NOT NULL, "timestamp" BIGINT NOT NULL, started BIGINT, position BIGINT, total BIGINT,
                    "receivedAt" BIGINT NOT NULL
                )
                """,
                #"CREATE INDEX sync_episode_action_received ON "syncEpisodeAction" ("receivedAt")"#,
                #"CREATE INDEX sync_episode_action_episode ON "syncEpisodeAction" (podcast, episode)"#,
            ]
        ),
        Migration(
            version: 4, name: "accounts, their sessions and tokens",
            statements: [
                #"ALTER TABLE "syncUser" RENAME TO account"#,
                // Today's sync users were phones of the household: members, not admins.
                #"ALTER TABLE account ADD COLUMN role TEXT NOT NULL DEFAULT 'member'"#,
                #"""
                CREATE TABLE "accountCredential" (
                    hash TEXT PRIMARY KEY, id TEXT NOT NULL UNIQUE, "user" TEXT NOT NULL, kind TEXT NOT NULL,
                    "createdAt" TIMESTAMPTZ NOT NULL, "lastUsedAt" TIMESTAMPTZ, "expiresAt" TIMESTAMPTZ, label TEXT, address TEXT
                )
                """#,
                #"CREATE INDEX account_credential_user ON "accountCredential" ("user")"#,
            ]
        ),
        Migration(
            version: 5, name: "the account that asked for a transfer",
            statements: [#"ALTER TABLE transfer ADD COLUMN "requestedBy" TEXT"#]
        ),
        Migration(
            version: 6, name: "one library, a place of one's own: each listener's subscriptions, playback, Up Next and phone sync",
            statements: [
                // Listeners then: the machine's owner ('') and every account. Each gets what everyone shared.
                #"""
                CREATE TABLE subscription (
                    listener TEXT NOT NULL, "podcastId" BIGINT NOT NULL REFERENCES podcast (id) ON DELETE CASCADE,
                    "autoDownload" INT NOT NULL DEFAULT 0, "keepLatest" INT, "playbackSpeed" DOUBLE PRECISION,
                    "oldestFirst" BOOLEAN NOT NULL DEFAULT FALSE, "createdAt" TIMESTAMPTZ NOT NULL, PRIMARY KEY (listener, "podcastId")
                )
                """#,
                #"""
                INSERT INTO subscription (listener, "podcastId", "autoDownload", "keepLatest", "playbackSpeed", "oldestFirst", "createdAt")
                SELECT l.name, p.id, COALESCE((p.record->>'autoDownload')::int, 0), (p.record->>'keepLatest')::int,
                       (p.record->>'playbackSpeed')::double precision, COALESCE((p.record->>'oldestFirst')::boolean, FALSE), now()
                FROM podcast p, (SELECT '' AS name UNION SELECT name FROM account) l
                """#,
                #"UPDATE podcast SET record = record - 'playbackSpeed' - 'oldestFirst'"#,
                #"ALTER TABLE playback ADD COLUMN listener TEXT NOT NULL DEFAULT ''"#,
                #"ALTER TABLE playback DROP CONSTRAINT playback_pkey"#,
                #"ALTER TABLE playback ADD PRIMARY KEY (listener, media, "mediaId")"#,
                #"""
                INSERT INTO playback (listener, media, "mediaId", "positionSeconds", played, "updatedAt")
                SELECT a.name, p.media, p."mediaId", p."positionSeconds", p.played, p."updatedAt" FROM playback p, account a WHERE p.listener = ''
                """#,
                #"ALTER TABLE "upNext" ADD COLUMN listener TEXT NOT NULL DEFAULT ''"#,
                #"ALTER TABLE "upNext" DROP CONSTRAINT "upNext_pkey""#,
                #"ALTER TABLE "upNext" ADD PRIMARY KEY (listener, rank)"#,
                #"INSERT INTO "upNext" (listener, rank, media, "mediaId") SELECT a.name, u.rank, u.media, u."mediaId" FROM "upNext" u, account a WHERE u.listener = ''"#,
                #"ALTER TABLE "syncPending" ADD COLUMN listener TEXT NOT NULL DEFAULT ''"#,
                #"ALTER TABLE "syncPending" DROP CONSTRAINT "syncPending_pkey""#,
                #"""
                INSERT INTO "syncPending" (listener, url, "addedAt", "errorMessage")
                SELECT a.name, s.url, s."addedAt", s."errorMessage" FROM "syncPending" s, account a WHERE s.listener = ''
                """#,
                #"DELETE FROM "syncPending" WHERE listener = ''"#,
                #"ALTER TABLE "syncPending" ADD PRIMARY KEY (listener, url)"#,
                #"ALTER TABLE "syncSubscriptionChange" ADD COLUMN listener TEXT NOT NULL DEFAULT ''"#,
                #"""
                INSERT INTO "syncSubscriptionChange" (listener, url, added, at)
                SELECT a.name, c.url, c.added, c.at FROM "syncSubscriptionChange" c, account a WHERE c.listener = '' ORDER BY c.seq
                """#,
                #"CREATE INDEX sync_subscription_change_listener ON "syncSubscriptionChange" (listener, at)"#,
                #"ALTER TABLE "syncEpisodeAction" ADD COLUMN listener TEXT NOT NULL DEFAULT ''"#,
                #"""
                INSERT INTO "syncEpisodeAction" (listener, podcast, episode, guid, device, action, "timestamp", started, position, total, "receivedAt")
                SELECT a.name, s.podcast, s.episode, s.guid, s.device, s.action, s."timestamp", s.started, s.position, s.total, s."receivedAt"
                FROM "syncEpisodeAction" s, account a WHERE s.listener = '' ORDER BY s.seq
                """#,
                #"CREATE INDEX sync_episode_action_listener ON "syncEpisodeAction" (listener, "receivedAt")"#,
                // A listener's subscriptions made or ended anywhere (and a moved feed) are changes their phones ask for. A
                // podcast deleted with subscribers has them deleted first, while its URL can still be read.
                "DROP TRIGGER podcast_subscription ON podcast",
                "DROP TRIGGER podcast_moved ON podcast",
                """
                CREATE FUNCTION ferry_log_listener_subscription() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    now BIGINT := EXTRACT(EPOCH FROM now())::bigint;
                BEGIN
                    IF TG_OP = 'DELETE' THEN
                        INSERT INTO "syncSubscriptionChange" (listener, url, added, at)
                            SELECT OLD.listener, "feedURL", FALSE, now FROM podcast WHERE id = OLD."podcastId";
                    ELSE
                        INSERT INTO "syncSubscriptionChange" (listener, url, added, at)
                            SELECT NEW.listener, "feedURL", TRUE, now FROM podcast WHERE id = NEW."podcastId";
                    END IF;
                    RETURN NULL;
                END $$
                """,
                """
                CREATE TRIGGER subscription_log AFTER INSERT OR DELETE ON subscription
                    FOR EACH ROW EXECUTE FUNCTION ferry_log_listener_subscription()
                """,
                """
                CREATE FUNCTION ferry_log_moved_podcast() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    now BIGINT := EXTRACT(EPOCH FROM now())::bigint;
                BEGIN
                    INSERT INTO "syncSubscriptionChange" (listener, url, added, at)
                        SELECT listener, OLD."feedURL", FALSE, now FROM subscription WHERE "podcastId" = NEW.id;
                    INSERT INTO "syncSubscriptionChange" (listener, url, added, at)
                        SELECT listener, NEW."feedURL", TRUE, now FROM subscription WHERE "podcastId" = NEW.id;
                    RETURN NULL;
                END $$
                """,
                """
                CREATE TRIGGER podcast_moved AFTER UPDATE ON podcast
                    FOR EACH ROW WHEN (OLD."feedURL" IS DISTINCT FROM NEW."feedURL") EXECUTE FUNCTION ferry_log_moved_podcast()
                """,
            ]
        ),
        Migration(
            version: 7, name: "where retention pruned each session's events",
            statements: [#"ALTER TABLE session ADD COLUMN "prunedSeq" BIGINT NOT NULL DEFAULT 0"#]
        ),
        Migration(
            version: 8, name: "sessions whose program acknowledges events",
            statements: [
                #"ALTER TABLE session ADD COLUMN acknowledges BOOLEAN NOT NULL DEFAULT false"#,
                #"UPDATE session SET acknowledges = true WHERE "acknowledgedSeq" > 0"#,
            ]
        ),
        Migration(version: 9, name: "each session's cookie jar", statements: [#"ALTER TABLE session ADD COLUMN cookies TEXT"#]),
        Migration(version: 10, name: "the HTTP version a transfer's answer came over", statements: [#"ALTER TABLE transfer ADD COLUMN "httpVersion" TEXT"#]),
        Migration(
            version: 11, name: "the credential store",
            statements: [
                #"CREATE TABLE credential (host TEXT PRIMARY KEY, "user" TEXT NOT NULL, password TEXT NOT NULL, "addedAt" DOUBLE PRECISION NOT NULL)"#
            ]
        ),
        Migration(
            version: 12, name: "each listener's bookmarks",
            statements: [
                #"""
                CREATE TABLE bookmark (
                    id BIGSERIAL PRIMARY KEY, listener TEXT NOT NULL, media TEXT NOT NULL, "mediaId" BIGINT NOT NULL,
                    seconds DOUBLE PRECISION NOT NULL, note TEXT, "createdAt" TIMESTAMPTZ NOT NULL
                )
                """#,
                #"CREATE INDEX bookmark_item ON bookmark (listener, media, "mediaId")"#,
                // A forgotten episode takes its bookmarks with it (a bookmark keeps it from being forgotten).
                #"""
                CREATE FUNCTION ferry_episode_bookmarks() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN DELETE FROM bookmark WHERE media = 'episode' AND "mediaId" = OLD.id; RETURN OLD; END $$
                """#,
                #"CREATE TRIGGER episode_bookmarks AFTER DELETE ON episode FOR EACH ROW EXECUTE FUNCTION ferry_episode_bookmarks()"#,
            ]
        ),
        Migration(
            version: 13, name: "transcripts indexed for search",
            statements: [
                #"""
                CREATE TABLE "transcriptIndex" (
                    "episodeId" BIGINT PRIMARY KEY REFERENCES episode (id) ON DELETE CASCADE, url TEXT NOT NULL,
                    "claimedAt" TIMESTAMPTZ, "indexedAt" TIMESTAMPTZ, "cueCount" INT NOT NULL DEFAULT 0,
                    "errorCode" TEXT, "errorMessage" TEXT, attempts INT NOT NULL DEFAULT 0
                )
                """#,
                // `words` is the line's words as TranscriptQuery folds them (the 'simple'
                // configuration: no stemming, any language), so both databases match alike.
                #"""
                CREATE TABLE "transcriptCue" (
                    id BIGSERIAL PRIMARY KEY, "episodeId" BIGINT NOT NULL REFERENCES "transcriptIndex" ("episodeId") ON DELETE CASCADE,
                    "startSeconds" DOUBLE PRECISION NOT NULL, speaker TEXT, body TEXT NOT NULL, words TSVECTOR NOT NULL
                )
                """#,
                #"CREATE INDEX "transcriptCue_episode" ON "transcriptCue" ("episodeId")"#,
                #"CREATE INDEX "transcriptCue_words" ON "transcriptCue" USING GIN (words)"#,
            ]
        ),
        Migration(
            version: 14, name: "each listener's playlists",
            statements: [
                #"""
                CREATE TABLE playlist (
                    id BIGSERIAL PRIMARY KEY, listener TEXT NOT NULL, name TEXT NOT NULL,
                    "createdAt" TIMESTAMPTZ NOT NULL, "updatedAt" TIMESTAMPTZ NOT NULL, UNIQUE (listener, name)
                )
                """#,
                #"""
                CREATE TABLE "playlistItem" (
                    "playlistId" BIGINT NOT NULL REFERENCES playlist (id) ON DELETE CASCADE, rank BIGINT NOT NULL,
                    media TEXT NOT NULL, "mediaId" BIGINT NOT NULL, PRIMARY KEY ("playlistId", rank)
                )
                """#,
                #"CREATE INDEX "playlistItem_item" ON "playlistItem" (media, "mediaId")"#,
                // A forgotten episode leaves the playlists (being in one keeps it from being forgotten).
                #"""
                CREATE FUNCTION ferry_episode_playlist_items() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN DELETE FROM "playlistItem" WHERE media = 'episode' AND "mediaId" = OLD.id; RETURN OLD; END $$
                """#,
                #"CREATE TRIGGER "episode_playlistItems" AFTER DELETE ON episode FOR EACH ROW EXECUTE FUNCTION ferry_episode_playlist_items()"#,
            ]
        ),
        Migration(
            version: 15, name: "subscriptions deleted through the Open Podcast API",
            statements: [#"ALTER TABLE "syncSubscriptionChange" ADD COLUMN deleted BOOLEAN NOT NULL DEFAULT FALSE"#]
        ),
    ]

    /// Brings the database up to the newest migration.
    static func migrate(_ client: PostgresClient, logger: Logger) async throws {
        try await client.withConnection { connection in
            _ = try await connection.query("SELECT pg_advisory_lock(\(Lock.migrations.rawValue))", logger: logger)
            do {
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS ferry_migration (version INT PRIMARY KEY, name TEXT NOT NULL, \"appliedAt\" TIMESTAMPTZ NOT NULL DEFAULT now())",
                    logger: logger
                )
                var applied: Set<Int> = []
                for try await version in try await connection.query("SELECT version FROM ferry_migration", logger: logger).decode(Int32.self) {
                    applied.insert(Int(version))
                }
                for migration in migrations where !applied.contains(migration.version) {
                    try await connection.withTransaction(logger: logger) { connection in
                        for statement in migration.statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
                        try await connection.query(
                            "INSERT INTO ferry_migration (version, name) VALUES (\(Int32(migration.version)), \(migration.name))", logger: logger
                        )
                    }
                    logger.info("journal migrated", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                }
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Lock.migrations.rawValue))", logger: logger)
                throw error
            }
            _ = try await connection.query("SELECT pg_advisory_unlock(\(Lock.migrations.rawValue))", logger: logger)
        }
    }
}
