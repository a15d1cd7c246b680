import FerryCore
import FerryKit
import Foundation
import GRDB

/// ``AccountStore`` in the journal (v17): `account` (what v14 called `syncUser`, with a role),
/// `accountCredential` (sessions and tokens by the SHA-256 of their secrets).
extension SQLiteListeningStore {
    package func addAccount(_ name: String, passwordHash: String, role: AccountRole, now: Date) async throws -> Bool {
        try await writer.write { db in
            try db.execute(
                sql: "INSERT INTO account (name, passwordHash, createdAt, role) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
                arguments: [name, passwordHash, JournalDate(now), role.rawValue]
            )
            return db.changesCount > 0
        }
    }

    package func updateAccount(_ name: String, passwordHash: String?, role: AccountRole?) async throws -> Bool {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE account SET passwordHash = COALESCE(?, passwordHash), role = COALESCE(?, role) WHERE name = ?",
                arguments: [passwordHash, role?.rawValue, name]
            )
            return db.changesCount > 0
        }
    }

    package func removeAccount(_ name: String) async throws -> Bool {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM syncDevice WHERE user = ?", arguments: [name])
            try db.execute(sql: "DELETE FROM accountCredential WHERE user = ?", arguments: [name])
            // Their places go with them; the podcasts they subscribed to stay in the library (and its files).
            try db.execute(sql: "DELETE FROM playlistItem WHERE playlistId IN (SELECT id FROM playlist WHERE listener = ?)", arguments: [name])
            for table in ["playback", "upNext", "bookmark", "playlist", "syncPending", "syncEpisodeAction"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE listener = ?", arguments: [name])
            }
            let podcasts = try Int64.fetchAll(db, sql: "DELETE FROM subscription WHERE listener = ? RETURNING podcastId", arguments: [name])
            for podcast in podcasts { try Self.updateUnion(podcast, db) }
            try db.execute(sql: "DELETE FROM syncSubscriptionChange WHERE listener = ?", arguments: [name])
            try db.execute(sql: "DELETE FROM account WHERE name = ?", arguments: [name])
            return db.changesCount > 0
        }
    }

    package func accounts(named: String?, now: Date) async throws -> [Account] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT a.name, a.role, a.createdAt,
                        (SELECT COUNT(*) FROM syncDevice d WHERE d.user = a.name),
                        (SELECT COUNT(*) FROM accountCredential c WHERE c.user = a.name AND c.kind = 'session' AND c.expiresAt > ?),
                        (SELECT COUNT(*) FROM accountCredential c WHERE c.user = a.name AND c.kind = 'token')
                    FROM account a WHERE ? IS NULL OR a.name = ? ORDER BY a.name
                    """,
                arguments: [JournalDate(now), named, named]
            ).map { row in
                Account(
                    name: row[0], role: AccountRole(rawValue: row[1]) ?? .member, createdAt: row[2], devices: row[3], sessions: row[4], tokens: row[5]
                )
            }
        }
    }

    package func password(of name: String) async throws -> (hash: String, role: AccountRole)? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT passwordHash, role FROM account WHERE name = ?", arguments: [name])
                .map { ($0[0], AccountRole(rawValue: $0[1]) ?? .member) }
        }
    }

    package func addCredential(_ credential: AccountCredentialRecord) async throws {
        try await writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO accountCredential (hash, id, user, kind, createdAt, lastUsedAt, expiresAt, label, address)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    credential.hash, credential.id, credential.user, credential.kind.rawValue, JournalDate(credential.createdAt),
                    JournalDate(credential.lastUsedAt), JournalDate(credential.expiresAt), credential.label, credential.address,
                ]
            )
        }
    }

    package func credential(hash: String, now: Date) async throws -> (credential: AccountCredentialRecord, role: AccountRole)? {
        try await writer.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.credentialColumns), a.role FROM accountCredential c JOIN account a ON a.name = c.user
                    WHERE c.hash = ? AND (c.expiresAt IS NULL OR c.expiresAt > ?)
                    """,
                arguments: [hash, JournalDate(now)]
            )
            return row.map { (Self.credential($0), AccountRole(rawValue: $0[9]) ?? .member) }
        }
    }

    package func touchCredential(hash: String, at: Date, address: String?) async throws {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE accountCredential SET lastUsedAt = ?, address = COALESCE(?, address) WHERE hash = ?",
                arguments: [JournalDate(at), address, hash]
            )
        }
    }

    package func credentials(user: String, kind: AccountCredentialRecord.Kind, now: Date) async throws -> [AccountCredentialRecord] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.credentialColumns) FROM accountCredential c
                    WHERE c.user = ? AND c.kind = ? AND (c.expiresAt IS NULL OR c.expiresAt > ?) ORDER BY c.createdAt DESC, c.id
                    """,
                arguments: [user, kind.rawValue, JournalDate(now)]
            ).map(Self.credential)
        }
    }

    package func removeCredentials(user: String, kind: AccountCredentialRecord.Kind, id: String?, keeping: String?) async throws -> Int {
        try await writer.write { db in
            try db.execute(
                sql: "DELETE FROM accountCredential WHERE user = ? AND kind = ? AND (? IS NULL OR id = ?) AND (? IS NULL OR hash != ?)",
                arguments: [user, kind.rawValue, id, id, keeping, keeping]
            )
            return db.changesCount
        }
    }

    private static let credentialColumns = "c.hash, c.id, c.user, c.kind, c.createdAt, c.lastUsedAt, c.expiresAt, c.label, c.address"

    private static func credential(_ row: Row) -> AccountCredentialRecord {
        AccountCredentialRecord(
            hash: row[0], id: row[1], user: row[2], kind: AccountCredentialRecord.Kind(rawValue: row[3]) ?? .session, createdAt: row[4],
            lastUsedAt: row[5], expiresAt: row[6], label: row[7], address: row[8]
        )
    }
}
