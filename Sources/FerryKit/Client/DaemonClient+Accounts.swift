import Foundation

/// The household's accounts (`/v1/users`, `/v1/me`): an admin's to manage; a member's own
/// password, sessions and tokens.
extension DaemonClient {
    /// Who this client is signed in as.
    public func signedIn() async throws -> SignedIn {
        try await send(.GET, "/v1/me")
    }

    /// Every account (an admin's).
    public func users() async throws -> AccountList {
        try await send(.GET, "/v1/users")
    }

    /// - Throws: `invalid_state` when the name is taken; `invalid_request` for a bad name or password.
    @discardableResult
    public func addUser(_ name: String, password: String, role: AccountRole = .member) async throws -> Account {
        try await send(.POST, "/v1/users", body: CreateAccountRequest(name: name, password: password, role: role))
    }

    /// A new password (the user's other sessions end) or role.
    @discardableResult
    public func updateUser(_ name: String, _ update: UpdateAccountRequest) async throws -> Account {
        try await send(.PATCH, "/v1/users/\(Self.escape(name))", body: update)
    }

    /// Removes the account with its devices, sessions and tokens.
    public func removeUser(_ name: String) async throws {
        let _: Empty = try await send(.DELETE, "/v1/users/\(Self.escape(name))")
    }

    /// A user's signed-in web sessions.
    public func userSessions(_ name: String) async throws -> AccountCredentialList {
        try await send(.GET, "/v1/users/\(Self.escape(name))/sessions")
    }

    /// Signs a user out: of one session (`id`), or of all but this client's own.
    public func endUserSessions(_ name: String, id: String? = nil) async throws {
        let _: Empty = try await send(.DELETE, "/v1/users/\(Self.escape(name))/sessions" + (id.map { "/\(Self.escape($0))" } ?? ""))
    }

    /// A user's API tokens (never their secrets).
    public func userTokens(_ name: String) async throws -> AccountCredentialList {
        try await send(.GET, "/v1/users/\(Self.escape(name))/tokens")
    }

    /// A new API token for the user, shown this once.
    public func makeUserToken(_ name: String, label: String? = nil) async throws -> CreatedAccountToken {
        try await send(.POST, "/v1/users/\(Self.escape(name))/tokens", body: CreateAccountTokenRequest(label: label))
    }

    /// Removes one of the user's tokens.
    public func removeUserToken(_ name: String, id: String) async throws {
        let _: Empty = try await send(.DELETE, "/v1/users/\(Self.escape(name))/tokens/\(Self.escape(id))")
    }
}

extension DaemonClient {
    /// Where the listeners beyond loopback answer (an admin's; `not_found` when there are none).
    public func remoteStatus() async throws -> RemoteStatus {
        try await send(.GET, "/v1/remote")
    }
}
