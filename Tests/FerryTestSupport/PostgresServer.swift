import FerryKit
import Foundation
import Synchronization

/// A throwaway PostgreSQL server for tests: Debian's `postgresql` binaries, a cluster made by
/// `initdb` in a temporary folder, listening on a free loopback port, trusting local
/// connections. One per test process, started on first use; each test takes a database of its
/// own (``database()``). PostgreSQL refuses to run as root: as root it runs as the `postgres`
/// user. It stops, and its folder goes, when the test process ends (a watcher polls the process
/// that started it).
package final class PostgresServer: Sendable {
    package let port: Int
    package let folder: URL

    /// Why there is none here (no binaries, no user to run them as), or nil. Found once: suites
    /// ask it when they are planned and again when they run.
    package static let unavailableReason: String? = {
        if binaries == nil { return "PostgreSQL is not installed (Debian's postgresql package: initdb and postgres)" }
        if getuid() == 0, getpwnam("postgres") == nil { return "running as root, and there is no postgres user to run PostgreSQL as" }
        return nil
    }()

    package static var isAvailable: Bool { unavailableReason == nil }

    private static let shared = Mutex<Result<PostgresServer, any Error>?>(nil)

    /// The process's server, started on first use.
    package static func start() throws -> PostgresServer {
        try shared.withLock { shared in
            if let shared { return try shared.get() }
            let result = Result { try PostgresServer() }
            shared = result
            return try result.get()
        }
    }

    private static let counter = Atomic<Int>(0)

    /// A new, empty database on the process's server: its URL
    /// (`postgres://postgres@127.0.0.1:PORT/NAME`).
    package static func database() throws -> String {
        try start().database()
    }

    /// ``database()`` from async code: the work (a lock, child processes waited for) happens on
    /// a thread of its own, never blocking a thread Swift's concurrency needs. Several tests
    /// blocking those threads at once stalled a whole parallel run.
    package static func newDatabase() async throws -> String {
        try await offPool { try database() }
    }

    /// `body` on a thread of its own.
    package static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// A server of the caller's own (to restart without disturbing other tests); it stops when
    /// the process ends, or with ``stop()``.
    package static func dedicated() throws -> PostgresServer {
        try PostgresServer()
    }

    /// A new database on this server: its URL. Empty, or a copy of `template` (a database of this
    /// server nobody is connected to).
    package func database(template: String? = nil) throws -> String {
        let name = "ferry_test_\(getpid())_\(Self.counter.add(1, ordering: .relaxed).newValue)"
        let copy = template.map { " TEMPLATE \($0.split(separator: "/").last.map(String.init) ?? $0) STRATEGY FILE_COPY" } ?? ""
        let created = try Self.run(bin("psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-q", "-c", "CREATE DATABASE \(name)\(copy)"])
        guard created.status == 0 else { throw TestFailure("CREATE DATABASE failed: \(created.output)") }
        return "postgres://postgres@127.0.0.1:\(port)/\(name)"
    }

    /// Stops the server now (`pg_ctl stop -m fast`).
    package func stop() throws {
        _ = try pgctl(["stop", "-m", "fast", "-w"])
    }

    /// Runs SQL on a database of the server (as the superuser) → psql's output.
    @discardableResult
    package func psql(_ url: String, _ sql: String) throws -> String {
        let name = url.split(separator: "/").last.map(String.init) ?? "postgres"
        let result = try Self.run(bin("psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", name, "-qAt", "-c", sql])
        guard result.status == 0 else { throw TestFailure("psql failed: \(result.output)") }
        return result.output
    }

    private static let binaries: URL? = {
        var candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { URL(fileURLWithPath: String($0)) }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        candidates += versions.sorted().reversed().map { URL(fileURLWithPath: "/usr/lib/postgresql/\($0)/bin") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("initdb").path) && FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("postgres").path) }
    }()

    func bin(_ name: String) -> String { Self.bin(name) }

    static func bin(_ name: String) -> String {
        let folder = Self.binaries!
        let own = folder.appendingPathComponent(name).path
        return FileManager.default.isExecutableFile(atPath: own) ? own : "/usr/bin/\(name)"
    }

    private init() throws {
        if let reason = Self.unavailableReason { throw TestFailure(reason) }
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ferry-postgres-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let asRoot = getuid() == 0
        if asRoot { _ = try Self.run("/bin/chown", ["postgres:postgres", folder.path]) }
        let data = folder.appendingPathComponent("data").path
        func asServerUser(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
            asRoot ? try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments) : try Self.run(program, arguments)
        }
        let initdb = try asServerUser(Self.bin("initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
        guard initdb.status == 0 else { throw TestFailure("initdb failed: \(initdb.output)") }
        // Another port when the one chosen was taken before the server bound it.
        var log = ""
        for attempt in 1...3 {
            let port = try unusedLoopbackPort()
            let logFile = folder.appendingPathComponent("log\(attempt)")
            if try Self.start(data: data, port: port, folder: folder, log: logFile, asRoot: asRoot) {
                self.port = port
                return
            }
            log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            guard log.contains("could not bind") else { break }
        }
        throw TestFailure("PostgreSQL did not start within 60 s: \(log.suffix(2000))")
    }

    /// Starts the server on `port` through a shell that stops it when this process is gone.
    /// - Returns: whether it answers within 60 s (a hang guard), false at once if it stopped.
    private static func start(data: String, port: Int, folder: URL, log: URL, asRoot: Bool) throws -> Bool {
        let postgres = [
            bin("postgres"), "-D", data, "-p", String(port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=\(folder.path)",
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200",
        ].map { "'\($0)'" }.joined(separator: " ")
        // The server's pid from its pid file: a restart (pg_ctl) makes another process.
        let watcher = "\(postgres) >'\(log.path)' 2>&1 & while [ -d /proc/\(getpid()) ]; do sleep 1; done; kill -INT $(head -1 '\(data)/postmaster.pid'); sleep 3; rm -rf '\(folder.path)'"
        _ = try ChildProcess.spawn(
            asRoot ? "/usr/sbin/runuser" : "/bin/sh",
            arguments: asRoot ? ["-u", "postgres", "--", "/bin/sh", "-c", watcher] : ["-c", watcher], output: .null)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if try run(bin("pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-q"]).status == 0 { return true }
            // The server stopped: the port was taken, say.
            if let text = try? String(contentsOf: log, encoding: .utf8), text.contains("could not bind") { return false }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// Stops and starts the server again (same port, same data), as a restart mid-run does.
    package func restart() throws {
        _ = try pgctl([
            "restart", "-m", "fast", "-w", "-o", "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(folder.path) -c fsync=off",
            "-l", folder.appendingPathComponent("log2").path,
        ])
    }

    /// Starts the server again after ``stop()`` (same port, same data).
    package func restartStopped() throws {
        _ = try pgctl([
            "start", "-w", "-o", "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(folder.path) -c fsync=off",
            "-l", folder.appendingPathComponent("log2").path,
        ])
    }

    /// `pg_ctl`, its output in a file: a server it starts keeps a pipe open (no end of file).
    private func pgctl(_ arguments: [String]) throws -> String {
        let args = ["-D", folder.appendingPathComponent("data").path] + arguments
        let output = folder.appendingPathComponent("pg_ctl.out")
        let result = getuid() == 0
            ? try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", bin("pg_ctl")] + args, outputFile: output)
            : try Self.run(bin("pg_ctl"), args, outputFile: output)
        guard result.status == 0 else { throw TestFailure("pg_ctl \(arguments[0]) failed: \(result.output)") }
        return result.output
    }

    @discardableResult
    static func run(_ program: String, _ arguments: [String], outputFile: URL? = nil) throws -> (status: Int32, output: String) {
        if let outputFile {
            // posix_spawn and waitpid: Foundation's Process can miss the exit of a child whose
            // own child (the server pg_ctl starts) lives on.
            FileManager.default.createFile(atPath: outputFile.path, contents: nil)
            let pid = try ChildProcess.spawn(program, arguments: arguments, output: .appendToFile(outputFile.path))
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            return ((status >> 8) & 0xff, (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "")
        }
        let result = try ChildProcess.capture(program, arguments: arguments)
        return (result.status, result.output + result.error)
    }
}
