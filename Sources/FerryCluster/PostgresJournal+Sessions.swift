import FerryCore
import FerryKit
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Sessions' acknowledgements and options.
extension PostgresJournal {
    package func sessionOptions(_ session: String) async throws -> TransferOptions {
        try await read { connection in
            for try await text in try await connection.query("SELECT options FROM session WHERE name = \(session)", logger: self.logger).decode(String?.self) {
                return try text.map { try Self.decoder.decode(TransferOptions.self, from: Data($0.utf8)) } ?? TransferOptions()
            }
            return TransferOptions()
        }
    }

    @discardableResult
    package func updateSessionOptions(_ session: String, _ change: @escaping @Sendable (TransferOptions) throws -> TransferOptions) async throws -> TransferOptions {
        try await write { connection in
            // The row first, so that two members changing options take turns on it.
            try await connection.query(#"INSERT INTO session (name, "acknowledgedSeq") VALUES (\#(session), 0) ON CONFLICT (name) DO NOTHING"#, logger: self.logger)
            let rows = try await connection.query("SELECT options FROM session WHERE name = \(session) FOR UPDATE", logger: self.logger)
            var current = TransferOptions()
            for try await text in rows.decode(String?.self) {
                if let text { current = try Self.decoder.decode(TransferOptions.self, from: Data(text.utf8)) }
            }
            let updated = try change(current)
            let json = updated.isEmpty ? nil : String(decoding: try Self.encoder.encode(updated), as: UTF8.self)
            try await connection.query("UPDATE session SET options = \(json) WHERE name = \(session)", logger: self.logger)
            return updated
        }
    }

    package func cookies(session: String) async throws -> [Cookie] {
        try await read { connection in
            for try await text in try await connection.query("SELECT cookies FROM session WHERE name = \(session)", logger: self.logger).decode(String?.self) {
                return try text.map { try Self.decoder.decode([Cookie].self, from: Data($0.utf8)) } ?? []
            }
            return []
        }
    }

    @discardableResult
    package func updateCookies(session: String, _ change: @escaping @Sendable ([Cookie]) throws -> [Cookie]) async throws -> [Cookie] {
        try await write { connection in
            try await connection.query(#"INSERT INTO session (name, "acknowledgedSeq") VALUES (\#(session), 0) ON CONFLICT (name) DO NOTHING"#, logger: self.logger)
            var current: [Cookie] = []
            for try await text in try await connection.query("SELECT cookies FROM session WHERE name = \(session) FOR UPDATE", logger: self.logger).decode(String?.self) {
                if let text { current = try Self.decoder.decode([Cookie].self, from: Data(text.utf8)) }
            }
            let updated = try change(current)
            guard updated != current else { return current }
            let json = updated.isEmpty ? nil : String(decoding: try Self.encoder.encode(updated), as: UTF8.self)
            try await connection.query("UPDATE session SET cookies = \(json) WHERE name = \(session)", logger: self.logger)
            return updated
        }
    }

    package func allSessionOptions() async throws -> [String: TransferOptions] {
        try await read { connection in
            var result: [String: TransferOptions] = [:]
            let rows = try await connection.query("SELECT name, options FROM session WHERE options IS NOT NULL", logger: self.logger)
            for try await (name, text) in rows.decode((String, String).self) {
                result[name] = try Self.decoder.decode(TransferOptions.self, from: Data(text.utf8))
            }
            return result
        }
    }
}
