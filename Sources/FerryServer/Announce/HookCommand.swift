#if canImport(Glibc)
import Glibc
#endif
import FerryCore
import FerryKit
import Foundation
import Logging
import Synchronization

/// A user's command run when a transfer ends (`--on-complete`, `--on-fail`). It runs as
/// `/bin/sh -c COMMAND`, the user's own text, and learns about the transfer only from its
/// environment (`FERRY_ID`, `FERRY_URL`, `FERRY_PATH`, …): a file name or URL never becomes part
/// of a command line, so quotes, `$(…)` and newlines in them stay data. It runs in a process
/// group of its own, is killed with everything it started after ``timeout``, and its output goes
/// to the daemon's log, line by line. Whatever it does, the transfer stays as it is.
struct HookCommand: Sendable {
    /// The program and its arguments: `/bin/sh -c COMMAND` for a hook, a FerryKit program's own.
    var arguments: [String]
    var environment: [String: String]
    /// Nil: it may run as long as it likes (a program launched for its session's events).
    var timeout: Duration? = .seconds(60)

    init(command: String, environment: [String: String], timeout: Duration? = .seconds(60)) {
        self.init(arguments: ["/bin/sh", "-c", command], environment: environment, timeout: timeout)
    }

    init(arguments: [String], environment: [String: String], timeout: Duration?) {
        self.arguments = arguments
        self.environment = environment
        self.timeout = timeout
    }

    /// The most output logged from one run.
    static let outputLimit = 64 << 10

    /// Runs it to its end (or its timeout).
    /// - Returns: its exit status (128 + the signal's number when killed), or nil when it could
    ///   not be started.
    func run(logger: Logger) async -> Int32? {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            logger.warning("hook not run: no pipe", metadata: ["error": "\(String(cString: strerror(errno)))"])
            return nil
        }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let pid: pid_t
        do {
            // The daemon's own environment (FERRY_HOME included: a FerryKit program must find this
            // daemon), with the transfer's variables over it.
            let inherited = ProcessInfo.processInfo.environment
            pid = try ChildProcess.spawn(
                arguments[0], arguments: Array(arguments.dropFirst()), environment: inherited.merging(environment) { _, new in new },
                newSession: true, output: .descriptor(fds[1])
            )
        } catch {
            close(fds[0])
            close(fds[1])
            logger.warning("hook not run", metadata: ["error": "\(error)"])
            return nil
        }
        close(fds[1])
        // Logged as it comes, until every process holding the pipe has closed it (something the
        // hook left running in the background may hold it longer than the hook runs).
        Self.logLines(from: fds[0], logger: logger)
        let exited = ExitFlag()
        return await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                let status = await ChildProcess.wait(pid)
                exited.value.store(true, ordering: .sequentiallyConsistent)
                return status
            }
            if let timeout {
                group.addTask {
                    // The timeout, or the daemon shutting down: its whole process group is killed,
                    // with what it started (unless it has exited: its id may be another's by now).
                    try? await Task.sleep(for: timeout)
                    if !exited.value.load(ordering: .sequentiallyConsistent) { kill(-pid, SIGKILL) }
                    return nil
                }
            }
            var status: Int32?
            for await result in group where result != nil {
                status = result
                group.cancelAll()
            }
            return status
        }
    }

    private final class ExitFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// Reads the hook's output on a thread of its own, logging each line (up to
    /// ``outputLimit`` bytes), until every process holding the pipe has closed it.
    private static func logLines(from fd: Int32, logger: Logger) {
        Thread.detachNewThread {
            var pending = Data()
            var logged = 0
            var buffer = [UInt8](repeating: 0, count: 4096)
            func emit(_ line: Data) {
                guard logged < outputLimit else { return }
                logged += line.count
                logger.info("hook output", metadata: ["hook.line": "\(String(decoding: line, as: UTF8.self))"])
            }
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                pending.append(contentsOf: buffer[0..<n])
                while let newline = pending.firstIndex(of: 10) {
                    emit(pending[pending.startIndex..<newline])
                    pending = Data(pending[(newline + 1)...])
                }
            }
            if !pending.isEmpty { emit(pending) }
            close(fd)
        }
    }
}
