#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A loopback port where connections never complete: a listener that never accepts, its accept
/// queue filled at once, so the kernel drops every further SYN and a client's connect hangs
/// until its own timeout. (A closed port would refuse at once.)
package final class SilentPort: @unchecked Sendable {
    package let port: Int
    private var sockets: [Int32] = []

    package init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw TestFailure("socket: \(errno)") }
        sockets.append(listener)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure("bind/listen: \(errno)") }
        port = Int(UInt16(bigEndian: address.sin_port))
        // Backlog 0 still queues one or two finished handshakes: fill the queue with connections
        // that nobody accepts.
        for _ in 0..<3 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard filler >= 0 else { continue }
            sockets.append(filler)
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        usleep(200_000)
    }

    deinit {
        for fd in sockets { close(fd) }
    }
}
