import FerryKit
import Foundation
import GRDB

/// The crash-safe record of every transfer and every event, in SQLite (WAL).
///
/// All writes are single transactions, so the journal is consistent whatever moment the process
/// dies at. A future PostgreSQL journal would offer the same methods.
public struct Journal: Sendable {
    let writer: any DatabaseWriter

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
        return migrator
    }
}
