import ArgumentParser
import FerryKit
import Foundation

struct PutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put",
        abstract: "Upload a file in the background, showing progress until the server has it.",
        discussion: """
            The daemon reads the file as it sends it (keep it unchanged until the upload \
            completes), retries after failures and, when the server speaks tus 1.0 or the IETF \
            resumable-upload protocol, continues from the server's offset after a drop or a \
            restart; otherwise an interrupted upload starts over. The server's answer (status, \
            headers, start of the body) is kept: `ferry ls --json` shows it.

            Examples:
              ferry put episode.mp3 https://example.com/upload/episode.mp3
              ferry put --post --form file photo.jpg https://example.com/photos
              ferry put --header 'Authorization: Bearer …' --limit-rate 1M big.iso https://example.com/isos/

            Exit status: 0 when the upload completed, 1 when it failed, 130 after Ctrl-C.
            """
    )

    @Argument(help: "The file to send.")
    var file: String

    @Argument(help: "Where to send it (http or https).")
    var url: String

    @Flag(name: .long, help: "Send with POST instead of PUT.")
    var post = false

    @Option(name: .long, help: ArgumentHelp("Send as multipart/form-data with the file in this form field.", valueName: "field"))
    var form: String?

    @Option(name: .customLong("protocol"), help: ArgumentHelp("auto (ask the server), plain, tus or ietf.", valueName: "protocol"))
    var uploadProtocol: UploadProtocol = .auto

    @Option(name: .long, help: "The session the upload belongs to.")
    var session = "cli"

    @Flag(name: .long, help: "Queue the upload and return at once.")
    var noWait = false

    @OptionGroup(title: "Transfer options (over the session's; see `ferry session`)") var transfer: TransferOptionFlags

    @OptionGroup(title: "Logins (when the server answers 401; see `ferry credentials`)") var auth: AuthFlags

    @OptionGroup var output: OutputOptions

    func validate() throws {
        _ = try transfer.options()
        try auth.check(inputFromStdin: false)
    }

    func run() async throws {
        let path = URL(fileURLWithPath: file).standardizedFileURL.path
        var options = try transfer.options()
        try auth.apply(to: &options)
        let client = try await CLIConnection.connect()
        let created = try await client.upload(
            CreateUploadRequest(
                file: path, url: url, method: post ? "POST" : nil, formField: form, uploadProtocol: uploadProtocol,
                session: session, options: options
            )
        )
        try await TransferFollower.report(created.transfers, after: created.lastEventSeq, wait: !noWait, json: output.json)
    }
}

extension UploadProtocol: ExpressibleByArgument {}
