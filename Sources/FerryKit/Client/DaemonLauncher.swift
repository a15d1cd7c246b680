import Foundation

/// Starts the daemon in the background by running `ferry serve --detach`, which returns once
/// the new daemon answers (or says why it could not start).
public struct DaemonLauncher: Sendable {
    /// The `ferry` executable.
    public var executable: URL
    /// The arguments, `serve --detach` by default.
    public var arguments: [String]
    /// The environment for the daemon (`FERRY_HOME` and such travel with it).
    public var environment: [String: String]

    /// A launcher that runs `executable` with `arguments`.
    /// - Parameters:
    ///   - executable: the `ferry` executable.
    ///   - arguments: what makes it start a daemon in the background and return.
    ///   - environment: the environment it runs in, which decides the daemon's folders.
    public init(executable: URL, arguments: [String] = ["serve", "--detach"], environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }

    /// `FERRY_BIN`, else `ferry` on the `PATH`; nil when neither exists.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> DaemonLauncher? {
        if let bin = environment["FERRY_BIN"], FileManager.default.isExecutableFile(atPath: bin) {
            return DaemonLauncher(executable: URL(fileURLWithPath: bin), environment: environment)
        }
        for folder in (environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(folder)/ferry"
            if FileManager.default.isExecutableFile(atPath: candidate) {
                return DaemonLauncher(executable: URL(fileURLWithPath: candidate), environment: environment)
            }
        }
        return nil
    }

    /// Runs the launch command to its end.
    /// - Throws: `daemon_start_failed` with the command's own explanation.
    public func launch() async throws {
        let (status, errors) = try await ChildProcess.run(executable.path, arguments: arguments, environment: environment)
        guard status == 0 else {
            let message = errors.trimmingCharacters(in: .whitespacesAndNewlines)
                .replacingOccurrences(of: "ferry: ", with: "")
            throw FerryError(.daemonStartFailed, message.isEmpty ? "The daemon could not be started (status \(status))." : message)
        }
    }
}
