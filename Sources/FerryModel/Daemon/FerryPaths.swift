import Foundation

/// Where Ferry keeps things (XDG): the library of finished files, and the state folder with the
/// journal, the API token and the running daemon's address. `FERRY_HOME=<dir>` puts both under
/// one folder (`<dir>/library`, `<dir>/state`), which tests use.
public struct FerryPaths: Sendable, Hashable {
    /// The library root: `Music/`, `Podcasts/<show>/`, `Downloads/`, and `.partial/`.
    public var library: URL
    /// The state folder: the journal, the API token, `daemon.json`, the lock and the log.
    public var state: URL

    /// Explicit folders, for tests or a program with its own layout; ``resolve(environment:)``
    /// finds the usual ones.
    public init(library: URL, state: URL) {
        self.library = library
        self.state = state
    }

    /// Paths from `FERRY_HOME`, or `XDG_DATA_HOME` / `XDG_STATE_HOME`, or `~/.local/...`.
    public static func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) -> FerryPaths {
        func folder(_ path: String) -> URL { URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL }
        if let home = environment["FERRY_HOME"], !home.isEmpty {
            let root = folder(home)
            return FerryPaths(
                library: root.appendingPathComponent("library", isDirectory: true),
                state: root.appendingPathComponent("state", isDirectory: true)
            )
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "\(home)/.local/share"
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "\(home)/.local/state"
        return FerryPaths(
            library: folder(data).appendingPathComponent("ferry", isDirectory: true),
            state: folder(state).appendingPathComponent("ferry", isDirectory: true)
        )
    }

    /// The SQLite journal of transfers, events and podcasts.
    public var journal: URL { state.appendingPathComponent("journal.sqlite") }
    /// The API token, mode 0600.
    public var token: URL { state.appendingPathComponent("token") }
    /// The aria2 RPC's secret (`token:SECRET`), mode 0600.
    public var aria2Secret: URL { state.appendingPathComponent("aria2-secret") }
    /// The daemon setting `ferry aria2 enable` writes: the aria2 RPC's port, on at every start.
    public var aria2Setting: URL { state.appendingPathComponent("aria2-rpc") }
    /// The listeners beyond loopback (`ferry remote enable`), read by `ferry serve`.
    public var remoteSetting: URL { state.appendingPathComponent("remote.json") }
    /// The sync API's listener for every start (``ListenerSettings/Sync``), read by `ferry serve`.
    public var syncSetting: URL { state.appendingPathComponent("sync.json") }
    /// The paired browser extension: a SHA-256 digest of its token, its origin and when it
    /// paired (JSON, mode 0600; `ferry extension revoke` deletes it).
    public var extensionPairing: URL { state.appendingPathComponent("extension.json") }
    /// The running daemon's address and pid (``DaemonInfo``).
    public var daemonInfo: URL { state.appendingPathComponent("daemon.json") }
    /// Held (flock) by the running daemon, so two daemons never share a journal.
    public var daemonLock: URL { state.appendingPathComponent("daemon.lock") }
    /// Where a daemon started in the background writes its output.
    public var daemonLog: URL { state.appendingPathComponent("daemon.log") }
    /// Part files of unfinished downloads.
    public var partials: URL { library.appendingPathComponent(".partial", isDirectory: true) }
}

/// What a running daemon writes to `daemon.json`.
public struct DaemonInfo: Codable, Sendable, Hashable {
    /// The API's base URL, e.g. `http://127.0.0.1:7447`.
    public var url: String
    /// The daemon's process id.
    public var pid: Int32
    /// The daemon's Ferry version.
    public var version: String
    /// When the daemon started.
    public var startedAt: Date

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(url: String, pid: Int32, version: String, startedAt: Date) {
        self.url = url
        self.pid = pid
        self.version = version
        self.startedAt = startedAt
    }
}

/// Ferry's version, shown by `ferry --version` and the status endpoint.
public enum FerryVersion {
    /// This build's version.
    public static let current = "0.1.0"
}
