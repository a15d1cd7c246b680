import FerryKit
import Foundation

/// The state folder's files that `ferry serve` reads at each start (``ListenerSettings``):
/// `remote.json` (`ferry remote enable`), `aria2-rpc` (`ferry aria2 enable`: its port) and
/// `sync.json`. The CLI and the admin's `PUT /v1/listener-settings` write the same files; a file
/// absent means off.
package struct ListenerSettingFiles: Sendable {
    package let paths: FerryPaths

    package init(paths: FerryPaths) {
        self.paths = paths
    }

    package func read() throws(FerryError) -> ListenerSettings {
        ListenerSettings(remote: try remote(), aria2Port: aria2Port(), sync: try sync())
    }

    /// Checks all three, then writes them (an off one's file removed).
    /// - Throws: `invalid_request` for an address, a name or a file that would stop the next start.
    package func write(_ settings: ListenerSettings) throws(FerryError) {
        try Self.check(settings)
        try setRemote(settings.remote)
        try save(settings.sync, at: paths.syncSetting)
        try setAria2Port(settings.aria2Port)
    }

    /// Writes `remote.json`, or removes it (nil).
    package func setRemote(_ settings: RemoteSettings?) throws(FerryError) {
        try save(settings, at: paths.remoteSetting)
    }

    /// Writes `aria2-rpc` and makes the RPC's secret, or removes the setting (nil).
    package func setAria2Port(_ port: Int?) throws(FerryError) {
        do {
            if let port {
                try Self.makeStateFolder(paths)
                try Data("\(port)\n".utf8).write(to: paths.aria2Setting, options: .atomic)
                _ = try SecretFile.loadOrCreate(paths.aria2Secret, in: paths.state)
            } else {
                try Self.remove(paths.aria2Setting)
            }
        } catch {
            throw FerryError(.fileSystem, "Could not write \(paths.aria2Setting.path): \(error)")
        }
    }

    /// `remote.json`, if any.
    package func remote() throws(FerryError) -> RemoteSettings? {
        try load(RemoteSettings.self, from: paths.remoteSetting, undo: "ferry remote disable")
    }

    /// `sync.json`, if any.
    package func sync() throws(FerryError) -> ListenerSettings.Sync? {
        try load(ListenerSettings.Sync.self, from: paths.syncSetting, undo: "removing it")
    }

    /// The port in `aria2-rpc`; nil when absent or unreadable (off).
    package func aria2Port() -> Int? {
        guard let text = try? String(contentsOf: paths.aria2Setting, encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap { (0...65535).contains($0) ? $0 : nil }
    }

    /// The checks the daemon's start makes, so a browser cannot save what would stop it.
    package static func check(_ settings: ListenerSettings) throws(FerryError) {
        if let remote = settings.remote {
            _ = try RemoteListeners.check(remote)
            try readable([remote.certificate, remote.privateKey])
        }
        if let sync = settings.sync {
            _ = try SyncListener(sync)
            guard (sync.certificate == nil) == (sync.privateKey == nil) else {
                throw FerryError.invalidRequest("The sync listener's certificate and private key go together.")
            }
            try readable([sync.certificate, sync.privateKey])
        }
        if let port = settings.aria2Port, !(0...65535).contains(port) {
            throw FerryError.invalidRequest("The aria2 RPC's port must be between 0 and 65535.")
        }
    }

    private static func readable(_ files: [String?]) throws(FerryError) {
        for file in files.compactMap({ $0 }) {
            guard file.hasPrefix("/") else { throw FerryError.invalidRequest("'\(file.prefix(200))' is not an absolute path.") }
            guard FileManager.default.isReadableFile(atPath: file) else { throw FerryError.invalidRequest("The daemon cannot read \(file.prefix(200)).") }
        }
    }

    private func load<Value: Decodable>(_ type: Value.Type, from file: URL, undo: String) throws(FerryError) -> Value? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        do {
            return try FerryJSON.decoder().decode(type, from: data)
        } catch {
            throw FerryError(.fileSystem, "\(file.path) is not Ferry's listener setting (\(error)); \(undo) removes it.")
        }
    }

    private func save(_ value: (some Encodable)?, at file: URL) throws(FerryError) {
        do {
            if let value {
                try Self.makeStateFolder(paths)
                try FerryJSON.encoder(pretty: true).encode(value).write(to: file, options: .atomic)
            } else {
                try Self.remove(file)
            }
        } catch {
            throw FerryError(.fileSystem, "Could not write \(file.path): \(error)")
        }
    }

    private static func makeStateFolder(_ paths: FerryPaths) throws {
        try FileManager.default.createDirectory(at: paths.state, withIntermediateDirectories: true)
    }

    private static func remove(_ file: URL) throws {
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
    }
}
