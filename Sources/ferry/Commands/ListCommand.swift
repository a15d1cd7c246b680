import ArgumentParser
import FerryKit
import Foundation

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List transfers: by default those not yet completed or cancelled.",
        aliases: ["list"]
    )

    @Flag(name: .shortAndLong, help: "Include completed and cancelled transfers.")
    var all = false

    @Option(name: .long, help: "Only this session's transfers (e.g. cli, web).")
    var session: String?

    @Option(name: .long, help: "Only transfers in these states, comma-separated (queued,running,paused,waiting,completed,failed,cancelled).")
    var state: String?

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let client = try await CLIConnection.connect()
        var states: [TransferState]?
        if let state {
            states = try state.split(separator: ",").map { name in
                guard let value = TransferState(rawValue: String(name)) else {
                    throw ValidationError("'\(name)' is not a state.")
                }
                return value
            }
        } else if !all {
            states = [.queued, .running, .paused, .waiting, .failed]
        }
        let transfers = try await client.transfers(session: session, states: states).transfers
        if output.json {
            try FerryJSON.encoder(pretty: true).printing(transfers)
            return
        }
        guard !transfers.isEmpty else {
            Terminal.print(all || state != nil ? "No transfers." : "No transfers in progress. `ferry ls --all` shows finished ones too.")
            return
        }
        Terminal.print(Self.table(transfers, width: Terminal.width))
    }

    /// `ID  STATE  PROGRESS  SPEED  NAME`, one row per transfer.
    static func table(_ transfers: [Transfer], width: Int) -> String {
        let header = ["ID", "STATE", "PROGRESS", "SPEED", "SESSION", "NAME"]
        let rows = transfers.map { t -> [String] in
            let note: String? =
                switch t.state {
                case .failed: t.error?.message
                case .waiting: Format.waiting(t)
                default: nil
                }
            let name = note.map { "\(Format.name(t)) (\($0))" } ?? Format.name(t)
            return [String(t.id), t.state.rawValue, Format.progress(t), Format.speedAndConnections(t), t.session, name]
        }
        let widths = (0..<header.count - 1).map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        return ([header] + rows).map { row in
            let line = (0..<header.count - 1).map { Format.pad(row[$0], widths[$0]) }.joined(separator: "  ") + "  " + row.last!
            return Format.truncate(line, to: max(width, 40))
        }.joined(separator: "\n")
    }
}
