import Foundation

/// What `ferry serve` reads from the state folder at each start, besides its options: the
/// listeners beyond loopback (`remote.json`, `ferry remote enable`), aria2's JSON-RPC
/// (`aria2-rpc`, `ferry aria2 enable`) and the sync API for phones (`sync.json`). A field left
/// nil is off. `GET` and `PUT /v1/listener-settings` read and write them for an admin's browser;
/// a change takes effect at the daemon's next start.
public struct ListenerSettings: Codable, Sendable, Hashable {
    /// The listeners beyond loopback; nil: loopback only.
    public var remote: RemoteSettings?
    /// aria2's JSON-RPC on loopback at this port (6800 as aria2's; 0: a free one at each
    /// start); nil: off (unless `ferry serve --aria2-rpc`).
    public var aria2Port: Int?
    /// The gpodder.net sync API's own listener; nil: off (unless `ferry serve --sync-listen`).
    public var sync: Sync?

    public struct Sync: Codable, Sendable, Hashable {
        /// `PORT` (loopback) or `ADDRESS:PORT`, as `ferry serve --sync-listen`.
        public var listen: String
        /// PEM files for HTTPS; both or neither.
        public var certificate: String?
        public var privateKey: String?

        public init(listen: String, certificate: String? = nil, privateKey: String? = nil) {
            self.listen = listen
            self.certificate = certificate
            self.privateKey = privateKey
        }
    }

    public init(remote: RemoteSettings? = nil, aria2Port: Int? = nil, sync: Sync? = nil) {
        self.remote = remote
        self.aria2Port = aria2Port
        self.sync = sync
    }
}

/// `GET /v1/listener-settings`: what is saved for the next start, and what answers now.
public struct ListenerSettingsStatus: Codable, Sendable, Hashable {
    /// What the next start reads.
    public var saved: ListenerSettings
    /// Where the running daemon answers now: its listeners beyond loopback, aria2's RPC and the
    /// sync API (empty or nil: not running).
    public var remoteURLs: [String]
    public var aria2URL: String?
    public var syncURL: String?
    /// The aria2 RPC's secret for its front ends, when the RPC is saved on or running.
    public var aria2Secret: String?

    public init(saved: ListenerSettings, remoteURLs: [String] = [], aria2URL: String? = nil, syncURL: String? = nil, aria2Secret: String? = nil) {
        self.saved = saved
        self.remoteURLs = remoteURLs
        self.aria2URL = aria2URL
        self.syncURL = syncURL
        self.aria2Secret = aria2Secret
    }
}
