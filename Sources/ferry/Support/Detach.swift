#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import Foundation

/// Starts `ferry serve` as a background daemon: a new session (so closing the terminal does
/// not stop it), stdin from /dev/null, output appended to `daemon.log`. Returns once it
/// answers on its API; fails with the log's last lines if it exits first.
enum Detach {
    static func start(arguments: [String], paths: FerryPaths) async throws {
        let connector = DaemonConnector(paths: paths)
        if let running = await connector.running() {
            Terminal.print("The Ferry daemon is already running at \(running.baseURL).")
            return
        }
        try FileManager.default.createDirectory(at: paths.state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let logStart = (try? FileManager.default.attributesOfItem(atPath: paths.daemonLog.path)[.size] as? Int) ?? 0
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let pid = try ChildProcess.spawn(executable, arguments: arguments, newSession: true, output: .appendToFile(paths.daemonLog.path))

        for _ in 0..<200 {
            if let client = await connector.running() {
                Terminal.print("The Ferry daemon is running at \(client.baseURL) (pid \(pid)).")
                return
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                // It exited. Perhaps another daemon started at the same moment and holds the lock.
                try await Task.sleep(for: .milliseconds(300))
                if let client = await connector.running() {
                    Terminal.print("The Ferry daemon is running at \(client.baseURL).")
                    return
                }
                throw FerryError(.daemonStartFailed, "The daemon could not start: " + logTail(paths.daemonLog, from: logStart))
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw FerryError(.daemonStartFailed, "The daemon did not answer within 20 seconds; see \(paths.daemonLog.path).")
    }

    /// The daemon's last words: the most useful error line from its log.
    private static func logTail(_ log: URL, from offset: Int) -> String {
        guard let data = FileManager.default.contents(atPath: log.path), data.count > offset else {
            return "see \(log.path)."
        }
        let lines = String(decoding: data[offset...], as: UTF8.self).split(separator: "\n")
        let interesting = lines.last { $0.contains("ferry: ") } ?? lines.last ?? ""
        let text = interesting.components(separatedBy: "ferry: ").last ?? String(interesting)
        return text.trimmingCharacters(in: .whitespaces) + " (log: \(log.path))"
    }
}
