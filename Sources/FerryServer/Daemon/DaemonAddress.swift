import FerryKit
import Foundation
import Synchronization

/// The address the server ended up listening on (port 0 picks a free one), known once it runs.
package final class DaemonAddress: Sendable {
    private let value = Mutex<String?>(nil)

    package init() {}

    /// The base URL, e.g. `http://127.0.0.1:7447`, once the server is listening.
    package var url: String? { value.withLock { $0 } }

    func set(_ url: String) { value.withLock { $0 = url } }
}

/// Writes and removes `daemon.json`, so clients can find the daemon.
package enum DaemonInfoFile {
    package static func write(_ info: DaemonInfo, paths: FerryPaths) throws {
        let data = try FerryJSON.encoder(pretty: true).encode(info)
        try data.write(to: paths.daemonInfo, options: .atomic)
    }

    /// Removes the file if it still describes this process.
    package static func remove(paths: FerryPaths, pid: Int32) {
        guard let data = FileManager.default.contents(atPath: paths.daemonInfo.path),
            let info = try? FerryJSON.decoder().decode(DaemonInfo.self, from: data), info.pid == pid
        else { return }
        try? FileManager.default.removeItem(at: paths.daemonInfo)
    }
}
