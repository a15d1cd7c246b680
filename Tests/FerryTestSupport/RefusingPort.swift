#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A loopback port that refuses every connection and that nothing else can take while this
/// lives: a socket bound to it that never listens. (A port merely found free may be taken by
/// another test's server before the test connects to it.)
package final class RefusingPort: Sendable {
    package let port: Int
    private let descriptor: Mutex<Int32>

    package init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw TestFailure("no port to refuse on: \(String(cString: strerror(errno)))")
        }
        self.descriptor = Mutex(descriptor)
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Lets the port go: a server may listen on it from now on.
    package func release() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    deinit { release() }
}
