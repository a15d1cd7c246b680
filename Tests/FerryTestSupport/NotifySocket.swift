#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A service manager's notification socket, as systemd gives a `Type=notify` service in
/// `NOTIFY_SOCKET`: a Unix datagram socket the test reads the daemon's messages from.
package final class NotifySocket: @unchecked Sendable {
    package let path: String
    private let descriptor: Int32

    package init(path: String) throws {
        self.path = path
        unlink(path)
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw TestFailure("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw TestFailure("bind \(path): \(String(cString: strerror(errno)))") }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// The next message, or nil after `timeout`.
    package func receive(timeout: Duration) async -> String? {
        let descriptor = descriptor
        let milliseconds = Int32(timeout / .milliseconds(1))
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, milliseconds) == 1 else { return continuation.resume(returning: nil) }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = recv(descriptor, &buffer, buffer.count, 0)
                continuation.resume(returning: count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil)
            }
        }
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
package func unusedLoopbackPort() throws -> Int {
    // Below the kernel's ephemeral range (32768-60999): a port that bind(0) found free was handed
    // to the next socket bound with port 0, or to an outgoing connection, before the server that
    // asked for it bound it (PostgreSQL could not start under a full parallel run).
    for _ in 0..<200 {
        let port = Int.random(in: 20_000..<32_768)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        if bound { return port }
    }
    throw TestFailure("no free port below 32768: \(String(cString: strerror(errno)))")
}
