import Foundation

/// Where Ferry answers beyond loopback (`ferry remote enable`, `ferry serve --listen`): the web
/// app, the API, the sync API and aria2's RPC, over HTTPS (or plain HTTP behind a trusted proxy).
public struct RemoteSettings: Codable, Sendable, Hashable {
    /// `ADDRESS:PORT` (HTTPS), or `http://ADDRESS:PORT` (plain, for a reverse proxy in
    /// ``trustedProxies`` only).
    public var listen: [String]
    /// The user's certificate chain and key (PEM), read again when they change; nil: Ferry's own
    /// CA signs one for the machine's names and addresses.
    public var certificate: String?
    public var privateKey: String?
    /// The names browsers reach this machine by (the Host header must be one of them or a
    /// listener's address); empty: the machine's host name and `NAME.local`.
    public var serverNames: [String]
    /// Addresses or CIDR ranges of reverse proxies whose `X-Forwarded-For`, `-Proto` and `-Host`
    /// count.
    public var trustedProxies: [String]

    public init(listen: [String] = [], certificate: String? = nil, privateKey: String? = nil, serverNames: [String] = [], trustedProxies: [String] = []) {
        self.listen = listen
        self.certificate = certificate
        self.privateKey = privateKey
        self.serverNames = serverNames
        self.trustedProxies = trustedProxies
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        listen = try container.decodeIfPresent([String].self, forKey: .listen) ?? []
        certificate = try container.decodeIfPresent(String.self, forKey: .certificate)
        privateKey = try container.decodeIfPresent(String.self, forKey: .privateKey)
        serverNames = try container.decodeIfPresent([String].self, forKey: .serverNames) ?? []
        trustedProxies = try container.decodeIfPresent([String].self, forKey: .trustedProxies) ?? []
    }
}

/// `GET /v1/remote`: where the listeners beyond loopback answer, and how a device trusts them.
public struct RemoteStatus: Codable, Sendable, Hashable {
    /// What was asked for (the settings file and `ferry serve`'s options together).
    public var settings: RemoteSettings
    /// The URLs to open from another device, one per listener and name.
    public var urls: [String]
    /// The SHA-256 of the server certificate presented now (hex, colon-separated); nil for plain
    /// listeners alone.
    public var certificateFingerprint: String?
    /// Ferry's own CA, when it signs the certificate: devices trust it once.
    public var caFingerprint: String?
    /// Where a device downloads Ferry's CA certificate (`/ca.pem` on a listener).
    public var caURL: String?

    public init(settings: RemoteSettings, urls: [String], certificateFingerprint: String?, caFingerprint: String?, caURL: String?) {
        self.settings = settings
        self.urls = urls
        self.certificateFingerprint = certificateFingerprint
        self.caFingerprint = caFingerprint
        self.caURL = caURL
    }
}
