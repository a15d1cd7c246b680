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
