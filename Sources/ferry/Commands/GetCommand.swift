import ArgumentParser
import FerryKit
import Foundation

struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download URLs in the background, showing progress until they finish.",
        discussion: """
            The daemon does the work: Ctrl-C only stops watching (the downloads go on), and \
            `ferry ls` or `ferry wait ID` pick them up again. A URL already queued, running or \
            completed in the same session is not downloaded twice; --force downloads it again.

            Finished files go to the library's Downloads/ folder, named after the server's \
            Content-Disposition or the URL; an existing name gets " (2)".

            --mirror names another server with the same file (the same length and ETag or \
            Last-Modified date): ranges are fetched from every mirror at once, and a mirror that \
            answers 404 or has a different file is dropped while the download goes on:
              ferry get https://a.example/x.iso --mirror https://b.example/x.iso --mirror https://c.example/x.iso

            Exit status: 0 when every transfer completed, 1 when one failed or was cancelled, \
            130 after Ctrl-C.
            """
    )

    @Argument(help: "http or https URLs to download.")
    var urls: [String]

    @Option(name: .long, help: "The session the transfers belong to.")
    var session = "cli"

    @Flag(name: .long, help: "Queue the downloads and return at once.")
    var noWait = false

    @Flag(name: .long, help: "Download again even if the URL was already downloaded in this session.")
    var force = false

    @Option(name: .long, help: ArgumentHelp("Another URL of the same file (repeatable; with one URL).", valueName: "url"))
    var mirror: [String] = []

    @OptionGroup(title: "Transfer options (over the session's; see `ferry session`)") var transfer: TransferOptionFlags

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("Give at least one URL to download.") }
        guard mirror.isEmpty || urls.count == 1 else {
            throw ValidationError("--mirror goes with one URL: mirrors are other addresses of the same file.")
        }
        _ = try transfer.options()
    }

    func run() async throws {
        let client = try await CLIConnection.connect()
        let created = try await client.createTransfers(
            CreateTransfersRequest(
                urls: urls, session: session, force: force, options: try transfer.options(), mirrors: mirror.isEmpty ? nil : mirror
            )
        )
        try await TransferFollower.report(created.transfers, after: created.lastEventSeq, wait: !noWait, json: output.json)
    }
}
