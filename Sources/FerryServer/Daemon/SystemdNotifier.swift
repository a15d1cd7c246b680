#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Tells the service manager how the daemon is doing (`sd_notify(3)`): a datagram to the Unix
/// socket named by `NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). Without that
/// variable (not started by systemd with `Type=notify`) it does nothing.
package struct SystemdNotifier: Sendable {
    package let socketPath: String?

    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `READY=1`: the API answers (systemd then starts what waits for the service).
    package func ready(status: String) { send("READY=1\nSTATUS=\(status)\nMAINPID=\(getpid())") }

    /// `STOPPING=1`: a graceful shutdown began.
    package func stopping() { send("STOPPING=1") }

    /// `RELOADING=1`: the daemon stops to start again in the same process (`READY=1` follows).
    package func reloading() { send("RELOADING=1") }

    /// Sends one message; failures are ignored, as `sd_notify` callers do.
    @discardableResult
    package func send(_ message: String) -> Bool {
        guard let socketPath else { return false }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }  // the abstract namespace
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let descriptor = socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let sent = Array(message.utf8).withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
        return sent == message.utf8.count
    }
}
