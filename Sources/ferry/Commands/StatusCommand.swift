import ArgumentParser
import FerryKit
import Foundation

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show whether the daemon runs, where, and how many transfers it has (exit 1 if not running)."
    )

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let paths = CLIConnection.paths
        guard let client = await DaemonConnector(paths: paths).running() else {
            if output.json {
                Terminal.print(#"{"running":false}"#)
            } else {
                Terminal.print("The Ferry daemon is not running (state folder \(paths.state.path)). `ferry serve --detach` starts it.")
            }
            throw ExitCode(1)
        }
        let status = try await client.status()
        if output.json {
            try FerryJSON.encoder(pretty: true).printing(status)
            return
        }
        let counts = TransferState.allCases.compactMap { state in status.counts[state.rawValue].map { "\($0) \(state.rawValue)" } }
        Terminal.print("""
            Ferry \(status.version) is running at \(status.url) (pid \(status.pid)), since \(status.startedAt.formatted(.iso8601))
            LibraryFolder: \(status.libraryPath)
            State:   \(status.statePath)
            Transfers: \(counts.isEmpty ? "none" : counts.joined(separator: ", ")) (at most \(status.maxConcurrent) at once)
            """)
        if let url = status.syncURL { Terminal.print("Sync for phones: \(url) (ferry sync user ls)") }
        if let url = status.aria2URL { Terminal.print("aria2 RPC: \(url) (secret: ferry aria2 secret)") }
    }
}

struct StopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop the daemon gracefully: running transfers are checkpointed and resume on the next start."
    )

    func run() async throws {
        let paths = CLIConnection.paths
        guard let client = await DaemonConnector(paths: paths).running() else {
            Terminal.print("The Ferry daemon is not running.")
            return
        }
        let pid = try await Self.stop(client)
        Terminal.print("Stopped the Ferry daemon (pid \(pid)).")
    }

    /// Asks the daemon to stop gracefully and waits until its process is gone.
    /// - Returns: its pid.
    static func stop(_ client: DaemonClient) async throws -> Int32 {
        let pid = try await client.status().pid
        try await client.shutdown()
        guard await ChildProcess.waitUntilGone(pid, timeout: .seconds(30)) else {
            throw FerryError(.daemonUnreachable, "The daemon (pid \(pid)) did not stop within 30 seconds.")
        }
        return pid
    }
}
