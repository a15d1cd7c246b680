#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Whether something accepts TCP connections at an address: meant for the daemon's loopback
/// address, where a connect is answered (accepted or refused) at once.
enum TCPProbe {
    static func accepts(host: String, port: Int) -> Bool {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICSERV
        hints.ai_socktype = CInt(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let info = list else { return false }
        defer { freeaddrinfo(list) }
        let descriptor = socket(info.pointee.ai_family, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0
    }
}
