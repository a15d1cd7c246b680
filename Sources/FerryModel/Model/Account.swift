import Foundation

/// What an account may do.
public enum AccountRole: String, Codable, Sendable, Hashable, CaseIterable {
    /// Everything the web app's login may do, and manage users.
    case admin
    /// Listens, subscribes and downloads into the shared library; pauses or cancels only their
    /// own transfers.
    case member
}

/// A person of the household: logs in to the web app from any device, syncs a phone's podcast
/// app, and keeps their own places in the shared library (`ferry user add`).
public struct Account: Codable, Sendable, Hashable {
    public var name: String
    public var role: AccountRole
    public var createdAt: Date
    /// Phones and apps that have synced as this user.
    public var devices: Int
    /// Web sessions signed in now.
    public var sessions: Int
    /// API tokens (`ferry user token`).
    public var tokens: Int

    public init(name: String, role: AccountRole, createdAt: Date, devices: Int = 0, sessions: Int = 0, tokens: Int = 0) {
        self.name = name
        self.role = role
        self.createdAt = createdAt
        self.devices = devices
        self.sessions = sessions
        self.tokens = tokens
    }
}

/// `GET /v1/users`.
public struct AccountList: Codable, Sendable, Hashable {
    public var users: [Account]

    public init(users: [Account]) {
        self.users = users
    }
}

/// `POST /v1/users`: a new account.
public struct CreateAccountRequest: Codable, Sendable, Hashable {
    public var name: String
    public var password: String
    /// `member` unless said.
    public var role: AccountRole?

    public init(name: String, password: String, role: AccountRole? = nil) {
        self.name = name
        self.password = password
        self.role = role
    }
}

/// `PATCH /v1/users/{name}`: a new password (which signs the user's other sessions out) or role.
public struct UpdateAccountRequest: Codable, Sendable, Hashable {
    public var password: String?
    public var role: AccountRole?
    /// The password now: needed when users change their own (a session left open on a shared
    /// computer must not be enough).
    public var currentPassword: String?

    public init(password: String? = nil, role: AccountRole? = nil, currentPassword: String? = nil) {
        self.password = password
        self.role = role
        self.currentPassword = currentPassword
    }
}

/// `GET /v1/me`: who the request is from.
public struct SignedIn: Codable, Sendable, Hashable {
    /// The account; nil for the daemon's token and the web app on this machine.
    public var user: String?
    /// What it may do: the token and this machine's web app are admins.
    public var role: AccountRole
    /// `token`, `web` (this machine's login link), `session` or `accountToken` (an account's).
    public var via: String

    public init(user: String?, role: AccountRole, via: String) {
        self.user = user
        self.role = role
        self.via = via
    }
}

/// `POST /v1/session`: a password login; the answer sets the session cookie.
public struct LoginRequest: Codable, Sendable, Hashable {
    public var name: String
    public var password: String

    public init(name: String, password: String) {
        self.name = name
        self.password = password
    }
}

/// A signed-in web session or an API token of an account, as listed (never its secret).
public struct AccountCredential: Codable, Sendable, Hashable {
    /// Names it in `DELETE /v1/users/{name}/sessions/{id}` (or `…/tokens/{id}`).
    public var id: String
    public var createdAt: Date
    /// Last used; nil: never.
    public var lastUsedAt: Date?
    /// A session's end; nil for a token (it lasts until removed).
    public var expiresAt: Date?
    /// The browser's `User-Agent` for a session, the label given for a token.
    public var label: String?
    /// The address it was last used from.
    public var address: String?
    /// The session this request came with.
    public var current: Bool?

    public init(
        id: String, createdAt: Date, lastUsedAt: Date? = nil, expiresAt: Date? = nil, label: String? = nil, address: String? = nil,
        current: Bool? = nil
    ) {
        self.id = id
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
        self.label = label
        self.address = address
        self.current = current
    }
}

/// `GET /v1/users/{name}/sessions` and `…/tokens`.
public struct AccountCredentialList: Codable, Sendable, Hashable {
    public var credentials: [AccountCredential]

    public init(credentials: [AccountCredential]) {
        self.credentials = credentials
    }
}

/// `POST /v1/users/{name}/tokens`: a new API token, shown this once.
public struct CreatedAccountToken: Codable, Sendable, Hashable {
    public var id: String
    public var user: String
    /// `Authorization: Bearer <token>`; kept by Ferry only as a hash.
    public var token: String
    public var label: String?

    public init(id: String, user: String, token: String, label: String?) {
        self.id = id
        self.user = user
        self.token = token
        self.label = label
    }
}

/// `POST /v1/users/{name}/tokens`.
public struct CreateAccountTokenRequest: Codable, Sendable, Hashable {
    /// What it is for ("laptop script").
    public var label: String?

    public init(label: String? = nil) {
        self.label = label
    }
}
