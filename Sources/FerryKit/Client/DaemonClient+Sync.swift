import Foundation

/// The users phones sync as (the daemon's gpodder.net API, `ferry serve --sync-listen`).
extension DaemonClient {
    /// The sync users, and where phones reach the sync API (nil when it is off).
    public func syncUsers() async throws -> SyncUserList {
        try await send(.GET, "/v1/sync/users")
    }

    /// Adds a sync user, or sets a new password for one (the API token only).
    @discardableResult
    public func setSyncUser(_ name: String, password: String) async throws -> SyncUser {
        try await send(.POST, "/v1/sync/users", body: SyncUserRequest(name: name, password: password))
    }

    public func removeSyncUser(_ name: String) async throws {
        let _: Empty = try await send(.DELETE, "/v1/sync/users/\(name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)")
    }
}
