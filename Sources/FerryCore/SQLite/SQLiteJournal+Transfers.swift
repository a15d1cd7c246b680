import FerryModel
import Foundation
import GRDB

extension SQLiteJournal {
    /// ``TransferJournal/createTransfers(_:reuseExisting:)``: a queue of half a million goes in
    /// 10,000 at a time, not one transaction each.
    package func createTransfers(_ drafts: [TransferRecord], reuseExisting: Bool) async throws -> [(record: TransferRecord, event: TransferEvent?)] {
        try await writer.write { db in
            try drafts.map { new in
                if reuseExisting, let existing = try Self.reusable(new, db) { return (existing, nil) }
                var record = new
                try record.insertQuickly(db)
                let event = try insert(
                    TransferEvent(kind: .created, transferId: record.transferId, session: record.session, date: record.createdAt),
                    db
                )
                return (record, event)
            }
        }
    }

    /// The session's newest transfer of the same URL that counts as already asked for, through
    /// a statement prepared once (building it for every URL was a quarter of queueing many).
    private static func reusable(_ new: TransferRecord, _ db: Database) throws -> TransferRecord? {
        // The id alone first: most URLs queued are new, and a row read costs more than a lookup.
        guard let id = try Int64.fetchOne(db.cachedStatement(sql: TransferRecord.selectReusable), arguments: [new.session, new.url]) else {
            return nil
        }
        return try TransferRecord.fetchOne(db, id: id)
    }

    package func transfer(id: Int64) async throws -> TransferRecord? {
        try await writer.read { db in try TransferRecord.fetchOne(db, id: id) }
    }

    package func listTransfers(session: String?, states: Set<TransferState>?, limit: Int?, after: Int64?, newestFirst: Bool) async throws -> [TransferRecord] {
        try await writer.read { db in
            var request = TransferRecord.order(newestFirst ? Column("id").desc : Column("id")).filter(Column("hidden") == false)
            if let session { request = request.filter(Column("session") == session) }
            if let states { request = request.filter(states.map(\.rawValue).contains(Column("state"))) }
            if let after { request = request.filter(newestFirst ? Column("id") < after : Column("id") > after) }
            if let limit { request = request.limit(limit) }
            return try request.fetchAll(db)
        }
    }

    package func counts() async throws -> [TransferState: Int] {
        try await writer.read { db in
            var counts: [TransferState: Int] = [:]
            let rows = try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS n FROM transfer WHERE NOT hidden GROUP BY state")
            for row in rows {
                if let state = TransferState(rawValue: row["state"]) { counts[state] = row["n"] }
            }
            return counts
        }
    }

    @discardableResult
    package func update<Result: Sendable>(
        id: Int64,
        _ body: @escaping @Sendable (inout TransferRecord) throws -> (Result, TransferEvent?)
    ) async throws -> (record: TransferRecord, result: Result, event: TransferEvent?) {
        try await writer.write { db in
            guard var record = try TransferRecord.fetchOne(db, id: id) else { throw FerryError.notFound(transfer: id) }
            let before = record
            let (result, draft) = try body(&record)
            // The row and its event dated by the journal's clock, at one instant.
            let stamp = now()
            if record != before {
                record.updatedAt = stamp
                try record.updateQuickly(db)
            }
            let event = try draft.map { draft in
                var dated = draft
                dated.date = stamp
                return try insert(dated, db)
            }
            return (record, result, event)
        }
    }

    /// Forgets every completed and cancelled transfer of `session`, or of all, with a `removed`
    /// event each, in one transaction; their earlier events go (the `removed` one tells every
    /// session what it needs). Their files stay.
    /// - Returns: the ids removed.
    package func removeFinished(session: String?) async throws -> [Int64] {
        try await writer.write { db in
            var request = TransferRecord.filter([TransferState.completed, .cancelled].map(\.rawValue).contains(Column("state")))
                .filter(Column("hidden") == false)
            if let session { request = request.filter(Column("session") == session) }
            let rows = try Row.fetchAll(db, request.select(Column("id"), Column("session"), Column("state")).order(Column("id")))
            try forgetEvents(of: rows.map { $0[0] }, db)
            for row in rows {
                let id: Int64 = row[0]
                try forget(id, completed: row[2] == TransferState.completed.rawValue, db)
                _ = try insert(TransferEvent(kind: .removed, transferId: id, session: row[1], date: now()), db)
            }
            return rows.map { $0[0] }
        }
    }

    package func removeHistory(before: Date, keepingNewest: Int, batch: Int) async throws -> [TransferRecord] {
        try await writer.write { db in
            let finished = TransferRecord.filter([TransferState.completed, .cancelled].map(\.rawValue).contains(Column("state")))
                .filter(Column("hidden") == false)
            let newestGone = try Int64.fetchOne(db, finished.select(Column("id")).order(Column("id").desc).limit(1, offset: keepingNewest)) ?? 0
            let records = try finished.filter(Column("id") <= newestGone || Column("updatedAt") < JournalDate(before))
                .order(Column("id")).limit(batch).fetchAll(db)
            try forgetEvents(of: records.map(\.transferId), db)
            for record in records {
                try forget(record.transferId, completed: record.state == .completed, db)
                _ = try insert(TransferEvent(kind: .removed, transferId: record.transferId, session: record.session, date: now()), db)
            }
            try deleteHiddenNoLongerNamed(db)
            return records
        }
    }

    /// Deletes the hidden transfers (removed while a song or an episode named them) that nothing
    /// names any more: the episode's file was deleted since. Their `removed` event was written
    /// when they were hidden. Without this, an auto-downloaded podcast kept its newest N files
    /// and one hidden row for every episode ever downloaded (the accelerated year: 50 a day).
    private func deleteHiddenNoLongerNamed(_ db: Database) throws {
        let hidden = try Int64.fetchAll(db, sql: "SELECT id FROM transfer WHERE hidden")
        for id in hidden where try !tables.contains(where: { try $0.namesTransfer?(db, id) ?? false }) {
            try db.execute(sql: "DELETE FROM transfer WHERE id = ?", arguments: [id])
        }
    }

    /// Takes a transfer off the list and journals `removed`; its earlier events go.
    package func removeTransfer(id: Int64) async throws -> TransferEvent {
        try await writer.write { db in
            guard let record = try TransferRecord.fetchOne(db, id: id) else { throw FerryError.notFound(transfer: id) }
            try forgetEvents(of: [id], db)
            try forget(id, completed: record.state == .completed, db)
            return try insert(TransferEvent(kind: .removed, transferId: id, session: record.session, date: now()), db)
        }
    }

    /// Deletes the events of these transfers: a removed transfer's history is nobody's (a session
    /// that had not read it learns of the removal from the `removed` event written after).
    /// In groups, within SQLite's limit on bound values.
    private func forgetEvents(of ids: [Int64], _ db: Database) throws {
        for group in stride(from: 0, to: ids.count, by: 500).map({ Array(ids[$0..<min($0 + 500, ids.count)]) }) {
            let marks = Array(repeating: "?", count: group.count).joined(separator: ",")
            try db.execute(sql: "DELETE FROM event WHERE transferId IN (\(marks))", arguments: StatementArguments(group))
        }
    }

    /// Deletes a transfer's row; a completed one that another module's row still names
    /// (``SQLiteTables/namesTransfer``: a song, an episode) is hidden instead, so removing it
    /// from the list keeps what it downloaded while its file is there.
    private func forget(_ id: Int64, completed: Bool, _ db: Database) throws {
        let named = try completed && tables.contains { try $0.namesTransfer?(db, id) ?? false }
        try db.execute(sql: named ? "UPDATE transfer SET hidden = 1 WHERE id = ?" : "DELETE FROM transfer WHERE id = ?", arguments: [id])
    }
}
