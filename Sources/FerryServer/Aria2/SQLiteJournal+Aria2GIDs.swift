import FerryCore
import FerryKit
import GRDB

/// The GIDs aria2 clients chose for downloads they added (aria2's `gid` option). A transfer
/// without one is known by its id in hex; a removed transfer takes its GID with it.
extension SQLiteJournal {
    /// Gives `transferId` the GID `gid` (16 lower-case hex digits).
    /// - Throws: `invalid_request` when another transfer has it.
    package func setAria2GID(_ gid: String, for transferId: Int64) async throws {
        try await writer.write { db in
            guard try !Self.aria2GIDTaken(gid, db) else { throw FerryError.invalidRequest("GID \(gid) is not unique.") }
            try db.execute(sql: "INSERT INTO aria2Gid (gid, transferId) VALUES (?, ?)", arguments: [gid, transferId])
        }
    }

    package func aria2GIDTaken(_ gid: String) async throws -> Bool {
        try await writer.read { db in try Self.aria2GIDTaken(gid, db) }
    }

    /// The transfer a chosen GID names, if any.
    package func transferId(aria2GID gid: String) async throws -> Int64? {
        try await writer.read { db in try Int64.fetchOne(db, sql: "SELECT transferId FROM aria2Gid WHERE gid = ?", arguments: [gid]) }
    }

    /// The chosen GIDs of these transfers (those that have one).
    package func aria2GIDs(of transferIds: [Int64]) async throws -> [Int64: String] {
        guard !transferIds.isEmpty else { return [:] }
        return try await writer.read { db in
            var gids: [Int64: String] = [:]
            for chunk in stride(from: 0, to: transferIds.count, by: 500).map({ transferIds[$0..<min($0 + 500, transferIds.count)] }) {
                let rows = try Row.fetchAll(
                    db, sql: "SELECT transferId, gid FROM aria2Gid WHERE transferId IN (\(databaseQuestionMarks(count: chunk.count)))",
                    arguments: StatementArguments(Array(chunk))
                )
                for row in rows { gids[row["transferId"]] = row["gid"] }
            }
            return gids
        }
    }

    /// Chosen by a client, or a transfer's own (its id in hex).
    private static func aria2GIDTaken(_ gid: String, _ db: Database) throws -> Bool {
        if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM aria2Gid WHERE gid = ?)", arguments: [gid]) == true { return true }
        guard let value = UInt64(gid, radix: 16), value <= UInt64(Int64.max) else { return false }
        return try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM transfer WHERE id = ?)", arguments: [Int64(value)]) == true
    }
}

extension SQLiteTables {
    /// The GIDs aria2 clients chose (a transfer's row goes with its GID).
    package static let aria2 = SQLiteTables(
        migrations: [
            Migration(16, "v16: aria2 GIDs chosen by clients") { db in
                try db.create(table: "aria2Gid") { t in
                    t.primaryKey("gid", .text)
                    t.column("transferId", .integer).notNull().unique().references("transfer", onDelete: .cascade)
                }
            }
        ]
    )
}
