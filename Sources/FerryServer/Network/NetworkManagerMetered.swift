import FerryCore
import FerryKit
import Foundation

/// NetworkManager's `Metered` property, read over the system bus with systemd's `busctl` (the
/// bus named by `DBUS_SYSTEM_BUS_ADDRESS`, else the system's). Nil where there is no `busctl`,
/// no bus or no NetworkManager on it: then only the interfaces the user names count.
enum NetworkManagerMetered {
    static let busctl = ["/usr/bin/busctl", "/bin/busctl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static let arguments = [
        "--system", "--timeout=2", "get-property", "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager",
        "org.freedesktop.NetworkManager", "Metered",
    ]

    /// Asks on a thread of its own: `busctl` runs to its end (at most its two-second timeout).
    @Sendable static func read() async -> UInt32? {
        guard let busctl else { return nil }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let answer = try? ChildProcess.capture(busctl, arguments: arguments)
                continuation.resume(returning: answer.flatMap { $0.status == 0 ? NetworkMetering.parseBusctlUInt32($0.output) : nil })
            }
        }
    }
}
