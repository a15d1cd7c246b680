#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Starts programs with `posix_spawn` and waits for them off the cooperative thread pool.
/// (Foundation's `Process` busy-waits and may not reap children inside Swift concurrency on
/// Linux.)
public enum ChildProcess {
    /// Where a child's standard output and error go (its standard input is always `/dev/null`).
    public enum Stream: Sendable {
        /// `/dev/null`: the output is discarded.
        case null
        /// Appended to this file (created with mode 0600).
        case appendToFile(String)
        /// Written to this descriptor (a pipe's write end).
        case descriptor(Int32)
    }

    /// Spawns `executable` with its standard input on `/dev/null`, without waiting for it.
    /// - Parameters:
    ///   - executable: the program's path (the `PATH` is not searched).
    ///   - arguments: its arguments, without the program name.
    ///   - environment: its environment; nil for this process's.
    ///   - newSession: run it in a new session (`setsid`), detached from the terminal.
    ///   - output: stdout and stderr both go here; nil keeps the parent's.
    ///   - errorPipe: a write end to use as stderr instead (see ``run(_:arguments:environment:)``).
    /// - Returns: the child's pid; reap it with ``wait(_:)``.
    /// - Throws: ``FerryError`` `daemon_start_failed` when the program cannot be started.
    public static func spawn(
        _ executable: String, arguments: [String], environment: [String: String]? = nil,
        newSession: Bool = false, output: Stream? = nil, errorPipe: Int32? = nil
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        switch output {
        case .null:
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .appendToFile(let path):
            posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .descriptor(let fd):
            posix_spawn_file_actions_adddup2(&actions, fd, 1)
            posix_spawn_file_actions_adddup2(&actions, fd, 2)
        case nil:
            break
        }
        if let errorPipe { posix_spawn_file_actions_adddup2(&actions, errorPipe, 2) }
        // Nothing else of this process's goes along: a descriptor opened without close-on-exec
        // (a socket, the journal) would otherwise live on in a hook that outlives its transfer.
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A child starts with every signal at its default and none blocked: this process ignores
        // SIGTERM and SIGINT (ServiceLifecycle watches them with dispatch sources), and an
        // ignored signal stays ignored across exec; a hook or helper that a SIGTERM cannot stop
        // would be a surprise.
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        // 0x80 is POSIX_SPAWN_SETSID (glibc ≥ 2.26), which Swift's Glibc module does not export.
        var flags = Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if newSession { flags |= Int16(0x80) }
        posix_spawnattr_setflags(&attributes, flags)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { env?.forEach { free($0) } }
        var pid: pid_t = 0
        let result = env.map { posix_spawn(&pid, executable, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw FerryError(.daemonStartFailed, "Could not start \(executable): \(String(cString: strerror(result))).")
        }
        return pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not export.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Waits for a child to exit, on a thread of its own.
    /// - Returns: its exit status (128 + signal number when killed).
    public static func wait(_ pid: pid_t) async -> Int32 {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                let signal = status & 0x7f
                continuation.resume(returning: signal == 0 ? (status >> 8) & 0xff : 128 + signal)
            }
        }
    }

    /// Runs a program to its end with stdin and stdout on /dev/null.
    /// - Parameters:
    ///   - executable: the program's path.
    ///   - arguments: its arguments, without the program name.
    ///   - environment: its environment; nil for this process's.
    /// - Returns: its exit status and what it wrote to stderr (at most about 1 MiB).
    /// - Throws: ``FerryError`` `daemon_start_failed` when the program cannot be started.
    public static func run(
        _ executable: String, arguments: [String], environment: [String: String]? = nil
    ) async throws -> (status: Int32, standardError: String) {
        var fds: [Int32] = [0, 0]
        // Close-on-exec, so the pipe does not leak into grandchildren (a daemon holding it open
        // would keep this read from ever ending).
        guard pipe(&fds) == 0, fcntl(fds[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(fds[1], F_SETFD, FD_CLOEXEC) == 0 else {
            throw FerryError(.daemonStartFailed, "Could not create a pipe: \(String(cString: strerror(errno))).")
        }
        let pid: pid_t
        do {
            pid = try spawn(executable, arguments: arguments, environment: environment, output: .null, errorPipe: fds[1])
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        close(fds[1])
        let reader = fds[0]
        let errorText = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var data = Data()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = read(reader, &buffer, buffer.count)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    if data.count < 1 << 20 { data.append(contentsOf: buffer[0..<n]) }
                }
                close(reader)
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
        return (await wait(pid), errorText)
    }
}

extension ChildProcess {
    /// Waits until `pid` is gone (polling every 100 ms), at most `timeout`.
    /// - Returns: true if it is gone.
    public static func waitUntilGone(_ pid: pid_t, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isAlive(pid) {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return true
    }

    /// True when `pid` names a running process. A zombie (exited, not yet reaped: common in
    /// containers whose init does not reap) counts as gone.
    public static func isAlive(_ pid: pid_t) -> Bool {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        // "pid (comm) S ...": the state follows the command name.
        let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first
        return state != "Z" && state != "X"
    }
}

extension ChildProcess {
    /// Runs a program to its end on the calling thread and returns what it wrote.
    ///
    /// Foundation's `Process.run()` on Linux (6.3.1) can crash while listing `/proc/self/fd`
    /// (swift-corelibs-foundation PR #5472); this is the same job without it.
    /// - Returns: its exit status (128 + signal number when killed), standard output and error.
    /// - Throws: ``FerryError`` `daemon_start_failed` when the program cannot be started.
    public static func capture(
        _ executable: String, arguments: [String], environment: [String: String]? = nil
    ) throws -> (status: Int32, output: String, error: String) {
        let out = try closeOnExecPipe()
        let err: [Int32]
        do { err = try closeOnExecPipe() } catch {
            close(out[0])
            close(out[1])
            throw error
        }
        let pid: pid_t
        do {
            pid = try spawn(executable, arguments: arguments, environment: environment, output: .descriptor(out[1]), errorPipe: err[1])
        } catch {
            [out[0], out[1], err[0], err[1]].forEach { close($0) }
            throw error
        }
        close(out[1])
        close(err[1])
        let (output, error) = drain(out[0], err[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return (signal == 0 ? (status >> 8) & 0xff : 128 + signal, output, error)
    }

    /// A pipe whose ends do not leak into grandchildren (a daemon holding one open would keep
    /// its read from ever ending).
    private static func closeOnExecPipe() throws -> [Int32] {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw FerryError(.daemonStartFailed, "Could not create a pipe: \(String(cString: strerror(errno))).")
        }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return fds
    }

    /// Reads two pipes to their ends together (either may fill while the other is read) and
    /// closes them.
    private static func drain(_ first: Int32, _ second: Int32) -> (String, String) {
        var data = [Data(), Data()]
        var fds = [pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while fds.contains(where: { $0.fd >= 0 }) {
            guard poll(&fds, nfds_t(fds.count), -1) >= 0 || errno == EINTR else { break }
            for i in fds.indices where fds[i].fd >= 0 && fds[i].revents != 0 {
                let n = read(fds[i].fd, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n > 0 {
                    data[i].append(contentsOf: buffer[0..<n])
                } else {
                    close(fds[i].fd)
                    fds[i].fd = -1
                }
            }
        }
        for fd in fds where fd.fd >= 0 { close(fd.fd) }
        return (String(decoding: data[0], as: UTF8.self), String(decoding: data[1], as: UTF8.self))
    }
}
