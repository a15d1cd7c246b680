#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import Foundation

/// Runs the real `ferry` binary (or any program) and captures what it prints.
package enum CommandRunner {
    package struct Output: Sendable, CustomStringConvertible {
        package var status: Int32
        package var stdout: String
        package var stderr: String
        package var description: String { "status \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    }

    /// The `ferry` binary this test run built: `FERRY_BIN`, else `.build/debug/ferry`.
    package static var ferryBinary: String {
        if let bin = ProcessInfo.processInfo.environment["FERRY_BIN"] { return bin }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/ferry").resolvingSymlinksInPath().path
    }

    /// Runs `ferry` with `arguments` in an environment where FERRY_HOME is `home` and the
    /// daemon picks a free port.
    /// - Parameters:
    ///   - input: what the command reads on standard input (else nothing: /dev/null).
    ///   - workingDirectory: where it runs (else this process's working directory).
    package static func ferry(
        _ arguments: [String], home: URL, extraEnvironment: [String: String] = [:], input: String? = nil, workingDirectory: URL? = nil,
        timeout: Duration = .seconds(120)
    ) async throws -> Output {
        var environment = ProcessInfo.processInfo.environment
        environment["FERRY_HOME"] = home.path
        environment["FERRY_PORT"] = environment["FERRY_PORT_FOR_TESTS"] ?? "0"
        environment["TERM"] = "dumb"
        for (key, value) in extraEnvironment { environment[key] = value }
        // GNU env's --chdir: posix_spawn's own chdir action is not visible to Swift here.
        guard let workingDirectory else { return try await run(ferryBinary, arguments, environment: environment, input: input, timeout: timeout) }
        return try await run("/usr/bin/env", ["-C", workingDirectory.path, ferryBinary] + arguments, environment: environment, input: input, timeout: timeout)
    }

    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String], input: String? = nil, timeout: Duration
    ) async throws -> Output {
        var stdinPath = "/dev/null"
        if let input {
            stdinPath = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-stdin-\(UUID().uuidString)").path
            try Data(input.utf8).write(to: URL(fileURLWithPath: stdinPath))
        }
        defer { if input != nil { unlink(stdinPath) } }
        var out: [Int32] = [0, 0], err: [Int32] = [0, 0]
        guard pipe(&out) == 0, pipe(&err) == 0 else { throw TestFailure("pipe failed") }
        for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, out[1], 1)
        posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        close(out[1])
        close(err[1])
        guard result == 0 else {
            close(out[0])
            close(err[0])
            throw TestFailure("could not run \(executable): \(String(cString: strerror(result)))")
        }
        let outReader = out[0], errReader = err[0], child = pid
        async let stdout = readAll(outReader)
        async let stderr = readAll(errReader)
        let status = try await withThrowingTaskGroup(of: Int32?.self) { group in
            group.addTask { await ChildProcess.wait(child) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let status = try await group.next()! else {
                kill(child, SIGKILL)
                throw TestFailure("\(executable) \(arguments.joined(separator: " ")) did not finish in \(timeout)")
            }
            return status
        }
        return Output(status: status, stdout: await stdout, stderr: await stderr)
    }

    private static func readAll(_ fd: Int32) async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var data = Data()
                var buffer = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = read(fd, &buffer, buffer.count)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    data.append(contentsOf: buffer[0..<n])
                }
                close(fd)
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
    }

    /// The daemon that `ferry` started for `home`, if any.
    package static func daemonInfo(home: URL) -> DaemonInfo? {
        let paths = FerryPaths.resolve(environment: ["FERRY_HOME": home.path])
        return FileManager.default.contents(atPath: paths.daemonInfo.path).flatMap { try? FerryJSON.decoder().decode(DaemonInfo.self, from: $0) }
    }

    /// A temporary FERRY_HOME for `body`; whatever daemon `ferry` started there is stopped
    /// (or killed) before the folder goes.
    package static func withHome(_ body: (URL) async throws -> Void) async throws {
        try await withTemporaryDirectory { home in
            do {
                try await body(home)
            } catch {
                await stopDaemon(home: home)
                throw error
            }
            await stopDaemon(home: home)
        }
    }

    /// Stops (or kills) whatever daemon runs for `home`.
    package static func stopDaemon(home: URL) async {
        _ = try? await ferry(["stop"], home: home, timeout: .seconds(40))
        if let info = daemonInfo(home: home), ChildProcess.isAlive(info.pid) { kill(info.pid, SIGKILL) }
    }
}
