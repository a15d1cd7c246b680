import FerryKit
import Foundation

/// A web session or an API token of an account, as kept: the SHA-256 of its secret, never the
/// secret itself.
package struct AccountCredentialRecord: Sendable, Hashable {
    package enum Kind: String, Sendable {
        /// A browser's login (the session cookie); it expires.
        case session
        /// An API token for scripts and FerryKit programs (`ferry user token`); it lasts until removed.
        case token
    }

    package var hash: String
    /// Names it in lists and in `DELETE …/sessions/{id}`: not the secret.
    package var id: String
    package var user: String
    package var kind: Kind
    package var createdAt: Date
    package var lastUsedAt: Date?
    package var expiresAt: Date?
    package var label: String?
    package var address: String?

    package init(
        hash: String, id: String, user: String, kind: Kind, createdAt: Date, lastUsedAt: Date? = nil, expiresAt: Date? = nil,
        label: String? = nil, address: String? = nil
    ) {
        self.hash = hash
        self.id = id
        self.user = user
        self.kind = kind
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
        self.label = label
        self.address = address
    }
}

/// The household's accounts, with their sessions and tokens: in the daemon's SQLite journal on
/// one machine, in PostgreSQL in a cluster (any member logs anyone in).
package protocol AccountStore: Sendable {
    /// - Returns: false when the name is taken (nothing changed).
    func addAccount(_ name: String, passwordHash: String, role: AccountRole, now: Date) async throws -> Bool
    /// Sets what is given. - Returns: false when there is no such account.
    func updateAccount(_ name: String, passwordHash: String?, role: AccountRole?) async throws -> Bool
    /// Removes the account with its devices, sessions and tokens. - Returns: false when there was none.
    func removeAccount(_ name: String) async throws -> Bool
    /// By name; `named`: that one alone (none when there is no such account).
    func accounts(named: String?, now: Date) async throws -> [Account]
    /// The account's password hash and role (one read: a login needs both).
    func password(of name: String) async throws -> (hash: String, role: AccountRole)?

    func addCredential(_ credential: AccountCredentialRecord) async throws
    /// The credential with this hash, and its account's role, unless it has expired.
    func credential(hash: String, now: Date) async throws -> (credential: AccountCredentialRecord, role: AccountRole)?
    func touchCredential(hash: String, at: Date, address: String?) async throws
    /// A user's unexpired credentials of a kind, newest first.
    func credentials(user: String, kind: AccountCredentialRecord.Kind, now: Date) async throws -> [AccountCredentialRecord]
    /// Removes a user's credentials of a kind: the one with `id`, or all but `keeping` (a hash).
    /// - Returns: how many.
    func removeCredentials(user: String, kind: AccountCredentialRecord.Kind, id: String?, keeping: String?) async throws -> Int
}
