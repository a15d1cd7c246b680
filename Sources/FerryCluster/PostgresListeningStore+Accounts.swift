import FerryCore
import FerryKit
import FerryListening
import Foundation
import PostgresNIO

/// ``AccountStore`` in PostgreSQL (migration 4): any member logs anyone in, and a session ended
/// on one member is ended on all.
extension PostgresListeningStore {
    package func addAccount(_ name: String, passwordHash: String, role: AccountRole, now: Date) async throws -> Bool {
        try await journal.write { connection in
            try await !self.isEmpty(
                connection.query(
                    #"""
                    INSERT INTO account (name, "passwordHash", "createdAt", role) VALUES (\#(name), \#(passwordHash), \#(now), \#(role.rawValue))
                    ON CONFLICT (name) DO NOTHING RETURNING name
                    """#, logger: self.logger
                )
            )
        }
    }

    package func updateAccount(_ name: String, passwordHash: String?, role: AccountRole?) async throws -> Bool {
        try await journal.write { connection in
            try await !self.isEmpty(
                connection.query(
                    #"""
                    UPDATE account SET "passwordHash" = COALESCE(\#(passwordHash), "passwordHash"), role = COALESCE(\#(role?.rawValue), role)
                    WHERE name = \#(name) RETURNING name
                    """#, logger: self.logger
                )
            )
        }
    }

    package func removeAccount(_ name: String) async throws -> Bool {
        try await journal.write { connection in
            try await connection.query(#"DELETE FROM "syncDevice" WHERE "user" = \#(name)"#, logger: self.logger)
            try await connection.query(#"DELETE FROM "accountCredential" WHERE "user" = \#(name)"#, logger: self.logger)
            // Their places go with them; the podcasts they subscribed to stay in the library (and its files).
            for table in ["playback", "\"upNext\"", "bookmark", "playlist", "\"syncPending\"", "\"syncEpisodeAction\""] {
                var query = PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE listener = $1")
                query.binds.append(name)
                try await connection.query(query, logger: self.logger)
            }
            var podcasts: [Int64] = []
            let rows = try await connection.query(#"DELETE FROM subscription WHERE listener = \#(name) RETURNING "podcastId""#, logger: self.logger)
            for try await id in rows.decode(Int64.self) { podcasts.append(id) }
            for podcast in podcasts { try await self.updateUnion(podcast, connection) }
            try await connection.query(#"DELETE FROM "syncSubscriptionChange" WHERE listener = \#(name)"#, logger: self.logger)
            return try await !self.isEmpty(connection.query(#"DELETE FROM account WHERE name = \#(name) RETURNING name"#, logger: self.logger))
        }
    }

    package func accounts(named: String?, now: Date) async throws -> [Account] {
        try await journal.read { connection in
            let rows = try await connection.query(
                #"""
                SELECT a.name, a.role, a."createdAt",
                    (SELECT COUNT(*) FROM "syncDevice" d WHERE d."user" = a.name),
                    (SELECT COUNT(*) FROM "accountCredential" c WHERE c."user" = a.name AND c.kind = 'session' AND c."expiresAt" > \#(now)),
                    (SELECT COUNT(*) FROM "accountCredential" c WHERE c."user" = a.name AND c.kind = 'token')
                FROM account a WHERE \#(named)::text IS NULL OR a.name = \#(named) ORDER BY a.name
                """#, logger: self.logger
            )
            var accounts: [Account] = []
            for try await (name, role, createdAt, devices, sessions, tokens) in rows.decode((String, String, Date, Int64, Int64, Int64).self) {
                accounts.append(
                    Account(
                        name: name, role: AccountRole(rawValue: role) ?? .member, createdAt: createdAt, devices: Int(devices),
                        sessions: Int(sessions), tokens: Int(tokens)
                    )
                )
            }
            return accounts
        }
    }

    package func password(of name: String) async throws -> (hash: String, role: AccountRole)? {
        try await journal.read { connection in
            for try await (hash, role) in try await connection.query(#"SELECT "passwordHash", role FROM account WHERE name = \#(name)"#, logger: self.logger)
                .decode((String, String).self) { return (hash, AccountRole(rawValue: role) ?? .member) }
            return nil
        }
    }

    package func addCredential(_ credential: AccountCredentialRecord) async throws {
        try await journal.write { connection in
            try await connection.query(
                #"""
                INSERT INTO "accountCredential" (hash, id, "user", kind, "createdAt", "lastUsedAt", "expiresAt", label, address)
                VALUES (\#(credential.hash), \#(credential.id), \#(credential.user), \#(credential.kind.rawValue), \#(credential.createdAt),
                    \#(credential.lastUsedAt), \#(credential.expiresAt), \#(credential.label), \#(credential.address))
                """#, logger: self.logger
            )
        }
    }

    package func credential(hash: String, now: Date) async throws -> (credential: AccountCredentialRecord, role: AccountRole)? {
        try await journal.read { connection in
            let rows = try await connection.query(
                #"""
                SELECT c.hash, c.id, c."user", c.kind, c."createdAt", c."lastUsedAt", c."expiresAt", c.label, c.address, a.role
                FROM "accountCredential" c JOIN account a ON a.name = c."user"
                WHERE c.hash = \#(hash) AND (c."expiresAt" IS NULL OR c."expiresAt" > \#(now))
                """#, logger: self.logger
            )
            for try await row in rows.decode(CredentialRow.self) {
                return (Self.credential(row), AccountRole(rawValue: row.9) ?? .member)
            }
            return nil
        }
    }

    package func touchCredential(hash: String, at: Date, address: String?) async throws {
        try await journal.write { connection in
            try await connection.query(
                #"UPDATE "accountCredential" SET "lastUsedAt" = \#(at), address = COALESCE(\#(address), address) WHERE hash = \#(hash)"#,
                logger: self.logger
            )
        }
    }

    package func credentials(user: String, kind: AccountCredentialRecord.Kind, now: Date) async throws -> [AccountCredentialRecord] {
        try await journal.read { connection in
            let rows = try await connection.query(
                #"""
                SELECT c.hash, c.id, c."user", c.kind, c."createdAt", c."lastUsedAt", c."expiresAt", c.label, c.address, '' FROM "accountCredential" c
                WHERE c."user" = \#(user) AND c.kind = \#(kind.rawValue) AND (c."expiresAt" IS NULL OR c."expiresAt" > \#(now))
                ORDER BY c."createdAt" DESC, c.id
                """#, logger: self.logger
            )
            var credentials: [AccountCredentialRecord] = []
            for try await row in rows.decode(CredentialRow.self) { credentials.append(Self.credential(row)) }
            return credentials
        }
    }

    package func removeCredentials(user: String, kind: AccountCredentialRecord.Kind, id: String?, keeping: String?) async throws -> Int {
        try await journal.write { connection in
            let rows = try await connection.query(
                #"""
                DELETE FROM "accountCredential" WHERE "user" = \#(user) AND kind = \#(kind.rawValue)
                    AND (\#(id)::text IS NULL OR id = \#(id)) AND (\#(keeping)::text IS NULL OR hash != \#(keeping)) RETURNING id
                """#, logger: self.logger
            )
            var count = 0
            for try await _ in rows { count += 1 }
            return count
        }
    }

    private typealias CredentialRow = (String, String, String, String, Date, Date?, Date?, String?, String?, String)

    private static func credential(_ row: CredentialRow) -> AccountCredentialRecord {
        AccountCredentialRecord(
            hash: row.0, id: row.1, user: row.2, kind: AccountCredentialRecord.Kind(rawValue: row.3) ?? .session, createdAt: row.4,
            lastUsedAt: row.5, expiresAt: row.6, label: row.7, address: row.8
        )
    }
}
