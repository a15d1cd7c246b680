import FerryModel
import Foundation
import GRDB

/// The credential store (`ferry credentials`): one login per host.
extension SQLiteJournal {
    package func storedCredentials() async throws -> [StoredCredential] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT host, user, password, addedAt FROM credential ORDER BY host").map { row in
                StoredCredential(host: row["host"], user: row["user"], password: row["password"], addedAt: Date(timeIntervalSince1970: row["addedAt"]))
            }
        }
    }

    package func saveCredential(_ credential: StoredCredential) async throws {
        try await writer.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO credential (host, user, password, addedAt) VALUES (?, ?, ?, ?)",
                arguments: [credential.host, credential.user, credential.password, credential.addedAt.timeIntervalSince1970]
            )
        }
    }

    @discardableResult
    package func removeCredential(host: String) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM credential WHERE host = ?", arguments: [host])
            return db.changesCount > 0
        }
    }
}
