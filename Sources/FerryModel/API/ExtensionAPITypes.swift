import Foundation

/// `POST /v1/extension/pairing-codes` (the API token only): a one-time code that pairs a browser
/// extension with the daemon (`ferry extension pair`).
public struct ExtensionPairingCode: Codable, Sendable {
    /// The code to type into the extension's options page; it works once.
    public var code: String
    /// How long the code stays valid.
    public var expiresInSeconds: Int
    /// The daemon's address, for the extension's options page.
    public var daemonURL: String
    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(code: String, expiresInSeconds: Int, daemonURL: String) {
        self.code = code
        self.expiresInSeconds = expiresInSeconds
        self.daemonURL = daemonURL
    }
}

/// `POST /v1/extension/pair`: the extension trades a pairing code for its own token.
public struct ExtensionPairRequest: Codable, Sendable {
    /// The code `ferry extension pair` printed.
    public var code: String
    /// Makes one from its fields.
    public init(code: String) { self.code = code }
}

/// The answer to a pairing: the extension's token (shown once, kept by the daemon only as a
/// SHA-256 digest). It may create and read transfers and read the daemon's status, nothing else.
public struct ExtensionToken: Codable, Sendable {
    /// `Authorization: Bearer <token>` on the extension's requests.
    public var token: String
    /// When it was paired.
    public var pairedAt: Date
    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(token: String, pairedAt: Date) {
        self.token = token
        self.pairedAt = pairedAt
    }
}

/// `GET /v1/extension` and `DELETE /v1/extension`: whether a browser extension is paired.
public struct ExtensionStatus: Codable, Sendable, Equatable {
    /// True while an extension's token is valid.
    public var paired: Bool
    /// When it was paired.
    public var pairedAt: Date?
    /// The extension's origin (`chrome-extension://ID`) when it paired from one: requests from
    /// another extension's origin are refused.
    public var origin: String?
    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(paired: Bool, pairedAt: Date? = nil, origin: String? = nil) {
        self.paired = paired
        self.pairedAt = pairedAt
        self.origin = origin
    }
}
