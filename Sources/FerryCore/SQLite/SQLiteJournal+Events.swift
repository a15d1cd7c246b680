import FerryModel
import Foundation
import GRDB

extension SQLiteJournal {
    /// Journals an event on its own (a checkpoint's progress, a restart reason).
    package func append(_ event: TransferEvent) async throws -> TransferEvent {
        try await writer.write { db in try insert(event, db) }
    }

    /// The session's events after `seq` (every session's when `session` is nil), oldest first.
    package func events(session: String?, after seq: Int64, limit: Int) async throws -> [TransferEvent] {
        try await writer.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT seq, payload FROM event WHERE (? IS NULL OR session = ?) AND seq > ? ORDER BY seq LIMIT ?",
                arguments: [session, session, seq, limit]
            )
            return try rows.map { row in
                var event = try Self.decoder.decode(TransferEvent.self, from: Data((row["payload"] as String).utf8))
                event.seq = row["seq"]
                return event
            }
        }
    }

    /// The newest sequence number ever given (0 when none), across all sessions.
    package func lastEventSeq() async throws -> Int64 {
        try await writer.read { db in
            // sqlite_sequence remembers the highest AUTOINCREMENT value even after pruning.
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'event'") ?? 0
        }
    }

    /// Counted in memory as transactions commit (``TransferWrites``): this process is the
    /// journal's only writer, and asking costs no read.
    package func mark() async throws -> JournalMark? { JournalMark(writes: writes.count) }

    package func acknowledgedSeq(session: String) async throws -> Int64 {
        try await writer.read { db in
            try Int64.fetchOne(db, sql: "SELECT acknowledgedSeq FROM session WHERE name = ?", arguments: [session]) ?? 0
        }
    }

    /// Records that the session has handled every event up to `seq`, and prunes those events.
    /// Acknowledging never goes backwards.
    package func acknowledge(session: String, through seq: Int64) async throws {
        try await writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO session (name, acknowledgedSeq, acknowledges) VALUES (?, ?, 1)
                    ON CONFLICT(name) DO UPDATE SET acknowledgedSeq = MAX(acknowledgedSeq, excluded.acknowledgedSeq), acknowledges = 1
                    """,
                arguments: [session, seq]
            )
            try db.execute(sql: "DELETE FROM event WHERE session = ? AND seq <= ?", arguments: [session, seq])
        }
    }

    package func pruneEvents(_ retention: EventRetention, now: Date) async throws -> Int {
        try await writer.write { db in
            let sessions = try Row.fetchAll(
                db,
                sql: """
                    SELECT e.session, COALESCE(s.acknowledges, 0)
                    FROM (SELECT DISTINCT session FROM event) e LEFT JOIN session s ON s.name = e.session
                    """
            )
            var deleted = 0
            for row in sessions {
                let name: String = row[0]
                let cut = retention.cut(acknowledges: row[1], now: now)
                // The newest seq beyond the count (none: nothing goes by count).
                let beyond = try Int64.fetchOne(
                    db, sql: "SELECT seq FROM event WHERE session = ? ORDER BY seq DESC LIMIT 1 OFFSET ?", arguments: [name, cut.keepNewest]
                ) ?? 0
                let condition = "session = ? AND (seq <= ? OR createdAt < ?)"
                let arguments: StatementArguments = [name, beyond, JournalDate(cut.before)]
                guard let newest = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM event WHERE \(condition)", arguments: arguments) else { continue }
                try db.execute(sql: "DELETE FROM event WHERE \(condition)", arguments: arguments)
                deleted += db.changesCount
                try db.execute(
                    sql: """
                        INSERT INTO session (name, prunedSeq) VALUES (?, ?)
                        ON CONFLICT(name) DO UPDATE SET prunedSeq = MAX(prunedSeq, excluded.prunedSeq)
                        """,
                    arguments: [name, newest]
                )
            }
            return deleted
        }
    }

    package func prunedSeq(session: String?) async throws -> Int64 {
        try await writer.read { db in
            try Int64.fetchOne(db, sql: "SELECT MAX(prunedSeq) FROM session WHERE ? IS NULL OR name = ?", arguments: [session, session]) ?? 0
        }
    }

    /// Gives the pages pruning freed back to the file system, brings the query planner's
    /// statistics up to date, and checkpoints the WAL (cut back to ``walSizeLimit``).
    package func compact() async throws {
        try await writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA incremental_vacuum")
            try db.execute(sql: "PRAGMA optimize")
            // Passive: readers of the WAL are not waited for; the next checkpoint gets the rest.
            _ = try? db.checkpoint(.passive)
        }
    }

    package func forgetSession(_ session: String) async throws -> Int {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM event WHERE session = ?", arguments: [session])
            let deleted = db.changesCount
            try db.execute(sql: "DELETE FROM session WHERE name = ?", arguments: [session])
            return deleted
        }
    }

    static let encoder = FerryJSON.encoder()
    static let decoder = FerryJSON.decoder()

    /// An event as JSON. One with nothing but its kind, transfer, session and date (most of
    /// them, and every one of a long queue) is written by hand: JSONEncoder was a quarter of the
    /// journal's time queueing many. The bytes are the same (`EventPayloadTests`).
    static func payload(_ event: TransferEvent) throws -> String {
        guard event.seq == nil, event.bytesReceived == nil, event.totalBytes == nil, event.offset == nil, event.reason == nil,
            event.attempt == nil, event.retryAt == nil, event.path == nil, event.sha256 == nil, event.error == nil,
            event.bytesPerSecond == nil, event.etaSeconds == nil, event.connections == nil, event.ranges == nil
        else { return String(decoding: try encoder.encode(event), as: UTF8.self) }
        var out = JSONWriter()
        out.beginObject()
        out.key("date"); out.date(event.date)
        out.key("kind"); out.string(event.kind.rawValue)
        out.key("session"); out.string(event.session)
        out.key("transferId"); out.integer(event.transferId)
        out.raw("}")
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// Inserts an event inside the caller's transaction and returns it with its `seq`; the
    /// ``onCommit(_:)`` handlers get it when the transaction commits.
    func insert(_ event: TransferEvent, _ db: Database) throws -> TransferEvent {
        var stored = event
        stored.seq = nil
        let payload = try Self.payload(stored)
        try db.cachedStatement(sql: "INSERT INTO event (session, transferId, kind, payload, createdAt) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [event.session, event.transferId, event.kind.rawValue, payload, JournalDate(event.date)])
        stored.seq = db.lastInsertedRowID
        committed.send(stored, after: db)
        return stored
    }
}
