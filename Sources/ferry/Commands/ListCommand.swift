import ArgumentParser
import FerryKit
import Foundation

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List transfers: by default those not yet completed or cancelled.",
        discussion: """
            With --all, a completed download whose file was deleted or moved since shows as \
            missing (`fileMissing` in --json); `ferry get URL` downloads it again, `ferry rm ID` \
            forgets it. --json also says what each file was checked against \
            (verifiedBy), its folder, checksum, priority and mirrors.
              ferry ls --all
              ferry ls --state failed,waiting --session podcasts
            """,
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
        // Page by page, each printed as it comes: a queue of half a million starts at once and
        // never sits in memory whole.
        var cursor: String?
        var printed = 0
        if output.json { Terminal.print("[", terminator: "") }
        repeat {
            let page = try await client.transfers(session: session, states: states, limit: Self.pageSize, cursor: cursor)
            cursor = page.nextCursor
            if output.json {
                let encoder = FerryJSON.encoder(pretty: true)
                for transfer in page.transfers {
                    Terminal.print((printed > 0 ? ",\n" : "\n") + String(decoding: try encoder.encode(transfer), as: UTF8.self), terminator: "")
                    printed += 1
                }
            } else if !page.transfers.isEmpty {
                Terminal.print(Self.table(page.transfers, width: Terminal.width, header: printed == 0))
                printed += page.transfers.count
            }
        } while cursor != nil
        if output.json {
            Terminal.print(printed > 0 ? "\n]" : "]")
            return
        }
        if printed == 0 {
            Terminal.print(all || state != nil ? "No transfers." : "No transfers in progress. `ferry ls --all` shows finished ones too.")
        }
    }

    static let pageSize = 1000
    /// What a transfer made with `--insecure` says wherever it is listed.
    static let insecureNote = "certificate not checked"

    /// `ID  STATE  PROGRESS  SPEED  NAME`, one row per transfer (a page of them: the columns are
    /// at least as wide as the first page's usually are, so pages line up).
    static func table(_ transfers: [Transfer], width: Int, header showsHeader: Bool = true) -> String {
        let header = ["ID", "STATE", "PROGRESS", "SPEED", "SESSION", "NAME"]
        let rows = transfers.map { t -> [String] in
            let note: String? =
                switch t.state {
                case .failed: t.error?.message
                case .waiting: Format.waiting(t)
                default: nil
                }
            let notes = [t.options?.insecure == true ? Self.insecureNote : nil, note].compactMap { $0 }
            let name = notes.isEmpty ? Format.name(t) : "\(Format.name(t)) (\(notes.joined(separator: "; ")))"
            let state = t.fileMissing == true ? "missing" : t.state.rawValue
            return [String(t.id), state, Format.progress(t), Format.speedAndConnections(t), t.session, name]
        }
        let least = [5, 9, 20, 0, 4]
        let widths = (0..<header.count - 1).map { column in
            max(least[column], ([header] + rows).map { $0[column].count }.max() ?? 0)
        }
        return ((showsHeader ? [header] : []) + rows).map { row in
            let line = (0..<header.count - 1).map { Format.pad(row[$0], widths[$0]) }.joined(separator: "  ") + "  " + row.last!
            return Format.truncate(line, to: max(width, 40))
        }.joined(separator: "\n")
    }
}
