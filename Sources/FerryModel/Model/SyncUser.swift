import Foundation

/// A user of the sync API for phones (`ferry sync user ls`, `GET /v1/sync/users`): never its password.
public struct SyncUser: Codable, Sendable, Hashable {
    public var name: String
    public var createdAt: Date
    public var devices: Int

    public init(name: String, createdAt: Date, devices: Int) {
        self.name = name
        self.createdAt = createdAt
        self.devices = devices
    }
}

/// `GET /v1/sync/users`.
public struct SyncUserList: Codable, Sendable, Hashable {
    public var users: [SyncUser]
    /// Where phones reach the sync API (`ferry serve --sync-listen`); nil when it is off.
    public var url: String?

    public init(users: [SyncUser], url: String?) {
        self.users = users
        self.url = url
    }
}

/// `POST /v1/sync/users`: adds a user, or sets a new password for one.
public struct SyncUserRequest: Codable, Sendable, Hashable {
    public var name: String
    public var password: String

    public init(name: String, password: String) {
        self.name = name
        self.password = password
    }
}
