import FerryCore
import Foundation
import PostgresNIO

/// The credential store (`ferry credentials`), shared by the cluster's members: a login added
/// through one daemon answers challenges on every member.
extension PostgresJournal {
    package func storedCredentials() async throws -> [StoredCredential] {
        try await read { connection in
            var result: [StoredCredential] = []
            let rows = try await connection.query(#"SELECT host, "user", password, "addedAt" FROM credential ORDER BY host"#, logger: self.logger)
            for try await (host, user, password, addedAt) in rows.decode((String, String, String, Double).self) {
                result.append(StoredCredential(host: host, user: user, password: password, addedAt: Date(timeIntervalSince1970: addedAt)))
            }
            return result
        }
    }

    package func saveCredential(_ credential: StoredCredential) async throws {
        let (host, user, password, addedAt) = (credential.host, credential.user, credential.password, credential.addedAt.timeIntervalSince1970)
        try await write { connection in
            try await connection.query(
                #"""
                INSERT INTO credential (host, "user", password, "addedAt") VALUES (\#(host), \#(user), \#(password), \#(addedAt))
                ON CONFLICT (host) DO UPDATE SET "user" = EXCLUDED."user", password = EXCLUDED.password, "addedAt" = EXCLUDED."addedAt"
                """#, logger: self.logger
            )
        }
    }

    @discardableResult
    package func removeCredential(host: String) async throws -> Bool {
        try await write { connection in
            let rows = try await connection.query("DELETE FROM credential WHERE host = \(host) RETURNING host", logger: self.logger)
            for try await _ in rows.decode(String.self) { return true }
            return false
        }
    }
}
