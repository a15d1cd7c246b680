import Foundation

/// Where a daemon that systemd starts on demand listens (`state/service.json`, written by
/// `ferry service install`). Connecting there starts it (socket activation), so a client tries
/// this address before starting a daemon of its own.
public enum ServiceAddress {
    struct Info: Codable {
        var url: String
    }

    static func file(_ paths: FerryPaths) -> URL { paths.state.appendingPathComponent("service.json") }

    /// The service's base URL, if one is installed.
    public static func read(paths: FerryPaths) -> String? {
        guard let data = FileManager.default.contents(atPath: file(paths).path) else { return nil }
        return (try? FerryJSON.decoder().decode(Info.self, from: data))?.url
    }

    public static func write(url: String, paths: FerryPaths) throws {
        try FileManager.default.createDirectory(at: paths.state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FerryJSON.encoder(pretty: true).encode(Info(url: url)).write(to: file(paths), options: .atomic)
    }

    public static func remove(paths: FerryPaths) {
        try? FileManager.default.removeItem(at: file(paths))
    }
}
