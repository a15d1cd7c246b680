import ArgumentParser
import FerryKit
import Foundation

struct WaitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait",
        abstract: "Wait until transfers finish, showing their progress.",
        discussion: """
            Exit status: 0 when all completed, 1 when one failed or was cancelled, 124 when \
            --timeout passed first, 130 after Ctrl-C. The transfers go on either way.
            """
    )

    @OptionGroup var transferIDs: TransferIDs

    @Option(name: .long, help: "Give up waiting after this many seconds.")
    var timeout: Double?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be a positive number of seconds.") }
    }

    func run() async throws {
        let client = try await CLIConnection.connect()
        let list = try await client.transfers()
        var transfers: [Transfer] = []
        for id in transferIDs.ids {
            guard let transfer = list.transfers.first(where: { $0.id == id }) else { throw FerryError.notFound(transfer: id) }
            transfers.append(transfer)
        }
        let interrupt = Terminal.onInterrupt {
            Terminal.progress("\nStopped waiting; the transfers continue in the daemon.\n")
            Foundation.exit(130)
        }
        defer { interrupt.cancel() }
        let follower = TransferFollower(connector: CLIConnection.connector)
        let seq = list.lastEventSeq
        let waited = transfers
        let final: [Transfer]? = try await withThrowingTaskGroup(of: [Transfer]?.self) { group in
            group.addTask { try await follower.follow(waited, after: seq) }
            if let timeout {
                group.addTask {
                    try await Task.sleep(for: .seconds(timeout))
                    return nil
                }
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
        guard let final else {
            Terminal.error("Timed out after \(Format.duration(timeout)) waiting for \(transferIDs.ids.map(String.init).joined(separator: ", ")).")
            throw ExitCode(124)
        }
        if output.json {
            try FerryJSON.encoder(pretty: true).printing(final)
        } else {
            for transfer in final { Terminal.print(ProgressView.summary(transfer)) }
        }
        let code = FollowExit.code(for: final)
        if code != 0 { throw ExitCode(code) }
    }
}
