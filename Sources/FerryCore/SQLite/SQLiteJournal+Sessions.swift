import FerryModel
import Foundation
import GRDB

extension SQLiteJournal {
    /// A session's configuration (empty when never set).
    package func sessionOptions(_ session: String) async throws -> TransferOptions {
        try await writer.read { db in
            let text = try String.fetchOne(db, sql: "SELECT options FROM session WHERE name = ?", arguments: [session])
            return try text.map { try Self.decoder.decode(TransferOptions.self, from: Data($0.utf8)) } ?? TransferOptions()
        }
    }

    /// Changes a session's configuration in one transaction; returns the new one.
    @discardableResult
    package func updateSessionOptions(
        _ session: String, _ change: @escaping @Sendable (TransferOptions) throws -> TransferOptions
    ) async throws -> TransferOptions {
        try await writer.write { db in
            let text = try String.fetchOne(db, sql: "SELECT options FROM session WHERE name = ?", arguments: [session])
            let current = try text.map { try Self.decoder.decode(TransferOptions.self, from: Data($0.utf8)) } ?? TransferOptions()
            let updated = try change(current)
            let json = updated.isEmpty ? nil : String(decoding: try Self.encoder.encode(updated), as: UTF8.self)
            try db.execute(
                sql: """
                    INSERT INTO session (name, acknowledgedSeq, options) VALUES (?, 0, ?)
                    ON CONFLICT(name) DO UPDATE SET options = excluded.options
                    """,
                arguments: [session, json]
            )
            return updated
        }
    }

    package func cookies(session: String) async throws -> [Cookie] {
        try await writer.read { db in
            let text = try String.fetchOne(db, sql: "SELECT cookies FROM session WHERE name = ?", arguments: [session])
            return try text.map { try Self.decoder.decode([Cookie].self, from: Data($0.utf8)) } ?? []
        }
    }

    @discardableResult
    package func updateCookies(session: String, _ change: @escaping @Sendable ([Cookie]) throws -> [Cookie]) async throws -> [Cookie] {
        try await writer.write { db in
            let text = try String.fetchOne(db, sql: "SELECT cookies FROM session WHERE name = ?", arguments: [session])
            let current = try text.map { try Self.decoder.decode([Cookie].self, from: Data($0.utf8)) } ?? []
            let updated = try change(current)
            guard updated != current else { return current }
            let json = updated.isEmpty ? nil : String(decoding: try Self.encoder.encode(updated), as: UTF8.self)
            try db.execute(
                sql: """
                    INSERT INTO session (name, acknowledgedSeq, cookies) VALUES (?, 0, ?)
                    ON CONFLICT(name) DO UPDATE SET cookies = excluded.cookies
                    """,
                arguments: [session, json]
            )
            return updated
        }
    }

    /// Every session with options, by name.
    package func allSessionOptions() async throws -> [String: TransferOptions] {
        try await writer.read { db in
            var result: [String: TransferOptions] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, options FROM session WHERE options IS NOT NULL") {
                let text: String = row["options"]
                result[row["name"]] = try Self.decoder.decode(TransferOptions.self, from: Data(text.utf8))
            }
            return result
        }
    }
}
