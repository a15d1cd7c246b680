#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import Foundation

/// The daemon's listening socket: handed over by systemd (socket activation), or bound here,
/// falling back to a free port when the usual one is taken and the user did not ask for it.
/// Binding before the server starts lets the daemon learn its address without a race.
package struct ListeningSocket: Sendable {
    package let descriptor: CInt

    /// The port it listens on.
    package var port: Int? { Self.localAddress(descriptor)?.port }
    /// The address it listens on, numeric (`127.0.0.1`, `::1`).
    package var host: String? { Self.localAddress(descriptor)?.host }

    /// The socket systemd passed (`sd_listen_fds(3)`): `LISTEN_PID` names this process and
    /// `LISTEN_FDS` counts sockets from descriptor 3; Ferry uses the first stream socket. The
    /// variables are removed so that children do not take the socket for theirs.
    package static func inherited() -> ListeningSocket? {
        let environment = ProcessInfo.processInfo.environment
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
            let count = environment["LISTEN_FDS"].flatMap(Int32.init), count > 0
        else { return nil }
        for descriptor in 3..<(3 + count) {
            var type: CInt = 0
            var length = socklen_t(MemoryLayout<CInt>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == CInt(SOCK_STREAM.rawValue) else { continue }
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            return ListeningSocket(descriptor: descriptor)
        }
        return nil
    }

    /// Binds and listens on `host:port` (port 0: a free one).
    /// - Parameter fallbackToFreePort: when the port is taken, listen on a free port of the same
    ///   host instead (the default port, not one the user named).
    /// - Throws: `daemon_start_failed` saying what holds the address, or why it cannot be used.
    package static func bind(host: String, port: Int, fallbackToFreePort: Bool = false) throws(FerryError) -> ListeningSocket {
        var failure = bindOnce(host: host, port: port)
        if case .failure(let error) = failure, error.errno == EADDRINUSE, fallbackToFreePort, port != 0 {
            failure = bindOnce(host: host, port: 0)
        }
        switch failure {
        case .success(let socket):
            return socket
        case .failure(let error) where error.errno == EADDRINUSE:
            throw FerryError(
                .daemonStartFailed,
                "Port \(port) on \(host) is already in use by another program; choose another with --port (or FERRY_PORT), or leave both unset to take a free port."
            )
        case .failure(let error):
            let what = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            throw FerryError(.daemonStartFailed, "Cannot listen on \(what): \(String(cString: strerror(error.errno))).")
        }
    }

    private struct BindError: Error { let errno: Int32 }

    private static func bindOnce(host: String, port: Int) -> Result<ListeningSocket, BindError> {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = CInt(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let info = list else { return .failure(BindError(errno: EADDRNOTAVAIL)) }
        defer { freeaddrinfo(list) }
        let descriptor = socket(info.pointee.ai_family, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failure(BindError(errno: errno)) }
        var one: CInt = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size))
        guard Glibc.bind(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0, listen(descriptor, 256) == 0 else {
            let failure = errno
            close(descriptor)
            return .failure(BindError(errno: failure))
        }
        return .success(ListeningSocket(descriptor: descriptor))
    }

    static func localAddress(_ descriptor: CInt) -> (host: String, port: Int)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { return nil }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let resolved = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), &service, socklen_t(service.count), NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        guard resolved == 0, let port = Int(String(cString: service)) else { return nil }
        return (String(cString: host), port)
    }
}
