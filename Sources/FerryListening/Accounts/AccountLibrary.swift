import Crypto
import FerryCore
import FerryKit
import Foundation
import Synchronization

/// Who is signed in: an account's web session or API token, checked.
package struct AccountIdentity: Sendable, Hashable {
    package var user: String
    package var role: AccountRole
    /// The credential's public id (``AccountCredential/id``).
    package var credentialID: String
    package var kind: AccountCredentialRecord.Kind
    /// The SHA-256 of its secret: how the store knows it.
    package var hash: String
}

/// The household's accounts (`ferry user`): passwords kept as scrypt, web sessions and API
/// tokens kept as the SHA-256 of their secrets. Names are what gpodder.net's are: 1–64 letters,
/// digits, `.`, `_`, `-`.
package final class AccountLibrary: Sendable {
    let store: any AccountStore
    private let clock: @Sendable () -> Date
    /// When each credential's last use was written: at most once a minute each (a phone's
    /// every request would otherwise be a write).
    private let touched = Mutex<[String: Date]>([:])
    /// Credentials read before (nil: read each time, as a cluster's members must).
    private let known: KnownCredentials?

    /// How long a web session lasts (from its login).
    package static let sessionLifetime: TimeInterval = 30 * 24 * 3600
    static let touchInterval: TimeInterval = 60

    /// - Parameter keepsCredentials: remember credentials read (only where this library makes
    ///   every change to them: not in a cluster).
    package init(store: any AccountStore, keepsCredentials: Bool = false, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.clock = clock
        known = keepsCredentials ? KnownCredentials() : nil
    }

    // MARK: Accounts

    /// - Throws: `invalid_request` for a bad name or password; `invalid_state` when the name is taken.
    package func add(_ name: String, password: String, role: AccountRole) async throws -> Account {
        try Self.validate(name: name)
        try Self.validate(password: password)
        guard try await store.addAccount(name, passwordHash: try AccountPassword.hash(password), role: role, now: clock()) else {
            throw FerryError.invalidState("There is already a user '\(name)'; `ferry user passwd \(name)` gives it a new password.")
        }
        return try await account(name)
    }

    /// A new password ends every session of the user but `keeping` (the one that changed it);
    /// a new role applies at once, to every session.
    package func update(_ name: String, password: String?, role: AccountRole?, keeping: String? = nil) async throws -> Account {
        if let password { try Self.validate(password: password) }
        let hash = try password.map { try AccountPassword.hash($0) }
        defer { known?.forget() }
        guard try await store.updateAccount(name, passwordHash: hash, role: role) else { throw Self.unknown(name) }
        if password != nil { _ = try await store.removeCredentials(user: name, kind: .session, id: nil, keeping: keeping) }
        return try await account(name)
    }

    package func remove(_ name: String) async throws {
        defer { known?.forget() }
        guard try await store.removeAccount(name) else { throw Self.unknown(name) }
    }

    package func list() async throws -> [Account] { try await store.accounts(named: nil, now: clock()) }

    package func account(_ name: String) async throws -> Account {
        guard let account = try await store.accounts(named: name, now: clock()).first else { throw Self.unknown(name) }
        return account
    }

    /// The account's role when the password is its own; nil otherwise. Unknown users take as
    /// long as known ones (one scrypt either way).
    package func verify(_ name: String, password: String) async -> AccountRole? {
        let stored = Self.isName(name) ? ((try? await store.password(of: name)) ?? nil) : nil
        guard AccountPassword.verify(password, against: stored?.hash ?? Self.decoy) else { return nil }
        return stored?.role
    }

    // MARK: Sessions and tokens

    /// A web session for a user who just gave their password.
    /// - Returns: the cookie's value (the only place the secret is).
    package func startSession(for user: String, userAgent: String?, address: String?) async throws -> String {
        let secret = Self.secret()
        let now = clock()
        try await store.addCredential(
            AccountCredentialRecord(
                hash: Self.hash(secret), id: Self.publicID(), user: user, kind: .session, createdAt: now, lastUsedAt: now,
                expiresAt: now.addingTimeInterval(Self.sessionLifetime), label: userAgent.map { String($0.prefix(200)) }, address: address
            )
        )
        return secret
    }

    /// A new API token for scripts and programs on other machines, with the user's rights.
    package func makeToken(for user: String, label: String?) async throws -> CreatedAccountToken {
        _ = try await account(user)
        if let label, label.count > 100 || label.contains(where: \.isNewline) {
            throw FerryError.invalidRequest("A token's label is one line of at most 100 characters.")
        }
        let secret = "ferry_" + Self.secret()
        let id = Self.publicID()
        try await store.addCredential(
            AccountCredentialRecord(hash: Self.hash(secret), id: id, user: user, kind: .token, createdAt: clock(), label: label)
        )
        return CreatedAccountToken(id: id, user: user, token: secret, label: label)
    }

    /// Whose session cookie or token this is; nil when it is unknown, expired or ended.
    package func identity(secret: String, address: String?) async throws -> AccountIdentity? {
        guard (32...200).contains(secret.utf8.count) else { return nil }
        let hash = Self.hash(secret)
        let now = clock()
        guard let (credential, role) = try await credential(hash, now: now) else { return nil }
        let due = touched.withLock { touched in
            guard (touched[hash].map { now.timeIntervalSince($0) >= Self.touchInterval }) ?? true else { return false }
            if touched.count > 10_000 { touched = [:] }
            touched[hash] = now
            return true
        }
        if due { try? await store.touchCredential(hash: hash, at: now, address: address) }
        return AccountIdentity(user: credential.user, role: role, credentialID: credential.id, kind: credential.kind, hash: hash)
    }

    /// The credential with this hash, kept or read (``KnownCredentials``).
    private func credential(_ hash: String, now: Date) async throws -> KnownCredentials.Found? {
        guard let known else { return try await store.credential(hash: hash, now: now) }
        if let found = known.found(hash, now: now) { return found }
        let generation = known.generation
        guard let found = try await store.credential(hash: hash, now: now) else { return nil }
        known.keep(hash, found, read: generation)
        return found
    }

    /// Signs one session out (its cookie's secret).
    package func endSession(secret: String) async throws {
        guard let identity = try await identity(secret: secret, address: nil), identity.kind == .session else { return }
        defer { known?.forget() }
        _ = try await store.removeCredentials(user: identity.user, kind: .session, id: identity.credentialID, keeping: nil)
    }

    /// A user's sessions or tokens; `current` marks the one with this hash.
    package func credentials(of user: String, kind: AccountCredentialRecord.Kind, current: String? = nil) async throws -> [AccountCredential] {
        _ = try await account(user)
        return try await store.credentials(user: user, kind: kind, now: clock()).map { record in
            AccountCredential(
                id: record.id, createdAt: record.createdAt, lastUsedAt: record.lastUsedAt, expiresAt: record.expiresAt, label: record.label,
                address: record.address, current: record.hash == current ? true : nil
            )
        }
    }

    /// Ends one of a user's sessions or tokens (`id`), or all of that kind but `keeping`.
    /// - Returns: how many ended. - Throws: `not_found` for an `id` the user does not have.
    @discardableResult
    package func end(_ kind: AccountCredentialRecord.Kind, of user: String, id: String? = nil, keeping: String? = nil) async throws -> Int {
        _ = try await account(user)
        defer { known?.forget() }
        let count = try await store.removeCredentials(user: user, kind: kind, id: id, keeping: keeping)
        if let id, count == 0 { throw FerryError(.notFound, "\(user) has no \(kind.rawValue) '\(id.prefix(40))'.") }
        return count
    }

    // MARK: Rules

    static func validate(name: String) throws {
        guard isName(name) else { throw FerryError.invalidRequest("A user's name has 1 to 64 letters, digits, '.', '_' or '-'.") }
    }

    static func validate(password: String) throws {
        guard (8...1024).contains(password.count) else { throw FerryError.invalidRequest("A password has 8 to 1,024 characters.") }
    }

    /// 1 to 64 ASCII letters, digits, `.`, `_`, `-`: safe in a path segment, as gpodder.net's names are.
    package static func isName(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ".-_".unicodeScalars.contains($0)) }
    }

    static func unknown(_ name: String) -> FerryError { FerryError(.notFound, "There is no user '\(name.prefix(64))'.") }

    /// A hash no password matches, checked for unknown users so they cannot be told apart by time.
    private static let decoy = "scrypt$\(AccountPassword.rounds)$\(AccountPassword.blockSize)$\(AccountPassword.parallelism)$AAAAAAAAAAAAAAAAAAAAAA==$"

    static func secret() -> String { SecretFile.randomHex(byteCount: 32) }
    static func publicID() -> String { SecretFile.randomHex(byteCount: 8) }
    package static func hash(_ secret: String) -> String { SHA256.hash(data: Data(secret.utf8)).hexText }
}
