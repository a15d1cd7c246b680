#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import Foundation

/// A real proxy from Debian's packages on loopback for the duration of a test: tinyproxy (HTTP,
/// with Basic authentication) or dante (SOCKS5, no authentication). Nil when the program is not
/// installed (`scripts/test` installs both as root).
package final class ProxyProcess: @unchecked Sendable {
    package enum Kind: Sendable { case http, socks5 }

    package let kind: Kind
    package let port: Int
    package let log: URL
    private let folder: URL
    private var pid: pid_t = 0

    package static let user = "ann"
    /// tinyproxy's configuration takes no punctuation beyond `-` in a password.
    package static let password = "s3cret-pw"

    /// The program's path, or nil when it is missing.
    package static func program(_ kind: Kind) -> String? {
        let path = kind == .http ? "/usr/bin/tinyproxy" : "/usr/sbin/danted"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// Writes the configuration and starts the proxy, waiting until it accepts connections.
    /// - Parameter connectPorts: ports tinyproxy lets clients `CONNECT` to (the origin's).
    package init(_ kind: Kind, folder: URL, connectPorts: [Int] = []) async throws {
        guard let program = Self.program(kind) else { throw TestFailure("\(kind) proxy not installed") }
        self.kind = kind
        self.folder = folder
        port = try unusedLoopbackPort()
        log = folder.appendingPathComponent("\(kind).log")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let config = folder.appendingPathComponent("\(kind).conf")
        switch kind {
        case .http:
            let ports = ([443] + connectPorts).map { "ConnectPort \($0)" }.joined(separator: "\n")
            try """
                Port \(port)
                Listen 127.0.0.1
                Timeout 60
                MaxClients 100
                Allow 127.0.0.1
                BasicAuth \(Self.user) \(Self.password)
                \(ports)
                LogLevel Connect
                """.write(to: config, atomically: true, encoding: .utf8)
            try start(program, ["-d", "-c", config.path])
        case .socks5:
            try """
                logoutput: stderr
                internal: 127.0.0.1 port = \(port)
                external: 127.0.0.1
                socksmethod: none
                clientmethod: none
                user.privileged: root
                user.unprivileged: nobody
                client pass { from: 127.0.0.1/32 to: 0.0.0.0/0 }
                socks pass { from: 127.0.0.1/32 to: 0.0.0.0/0 log: connect }
                """.write(to: config, atomically: true, encoding: .utf8)
            try start(program, ["-f", config.path])
        }
        try await eventually("the \(kind) proxy to listen on \(port)", timeout: .seconds(10)) {
            Self.accepts(self.port)
        }
    }

    /// The proxy URL, with the test credentials for tinyproxy unless `password` says otherwise.
    package func url(password: String? = ProxyProcess.password) -> String {
        switch kind {
        case .http:
            return password.map { "http://\(Self.user):\($0)@127.0.0.1:\(port)" } ?? "http://127.0.0.1:\(port)"
        case .socks5:
            return "socks5h://127.0.0.1:\(port)"
        }
    }

    /// What the proxy logged so far.
    package var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Stops it (SIGKILL: a proxy that dies) and waits until the port is free.
    package func kill() async {
        guard pid > 0 else { return }
        Glibc.kill(pid, SIGKILL)
        _ = await ChildProcess.wait(pid)
        pid = 0
    }

    /// Starts it again on the same port.
    package func restart() async throws {
        await kill()
        let config = folder.appendingPathComponent("\(kind).conf")
        try start(Self.program(kind)!, kind == .http ? ["-d", "-c", config.path] : ["-f", config.path])
        try await eventually("the \(kind) proxy to listen again", timeout: .seconds(10)) { Self.accepts(self.port) }
    }

    deinit {
        if pid > 0 { Glibc.kill(pid, SIGKILL) }
    }

    private func start(_ program: String, _ arguments: [String]) throws {
        pid = try ChildProcess.spawn(program, arguments: arguments, output: .appendToFile(log.path))
    }

    static func accepts(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
