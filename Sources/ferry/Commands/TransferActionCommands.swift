import ArgumentParser
import FerryKit
import Foundation

/// Runs one action per id, reporting each; fails (exit 1) if any failed.
private func forEachTransfer(_ ids: [Int64], _ action: (DaemonClient, Int64) async throws -> String) async throws {
    let client = try await CLIConnection.connect()
    var failed = false
    for id in ids {
        do {
            Terminal.print(try await action(client, id))
        } catch let error as FerryError {
            Terminal.error(error.message)
            failed = true
        }
    }
    if failed { throw ExitCode(1) }
}

struct PauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause", abstract: "Pause transfers; the bytes on disk are kept for `ferry resume`.",
        discussion: """
            Each is reported once its download has stopped and its bytes are safe on disk (the \
            daemon waits up to \(Transfer.stopWait.components.seconds) seconds for a slow disk); the byte count shown is where \
            `ferry resume` continues. --all pauses every queued, running and waiting transfer \
            (of one --session).
              ferry pause 3 4
              ferry pause --all
              ferry pause --all --session podcasts
            """
    )
    @OptionGroup var selection: TransferSelection

    func run() async throws {
        guard !selection.all else {
            let paused = try await CLIConnection.connect().pauseAll(session: selection.session).transfers
            for t in paused { Terminal.print("\(t.id) paused at \(Format.progress(t))") }
            if paused.isEmpty { Terminal.print("Nothing to pause.") }
            return
        }
        try await forEachTransfer(selection.ids) { client, id in
            let t = try await client.pause(id)
            return "\(id) paused at \(Format.progress(t))"
        }
    }
}

struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Resume paused or failed transfers from the bytes on disk (or retry a waiting one now).",
        discussion: """
            --all resumes every paused transfer (of one --session); failed ones are resumed by \
            id. --url gives one transfer a new URL of the same file, such as a signed link that \
            expired (pause a running one first).
              ferry resume 3
              ferry resume --all --session podcasts
              ferry resume 9 --url 'https://cdn.example/x.iso?sig=new'
            """
    )
    @OptionGroup var selection: TransferSelection

    @Option(name: .long, help: ArgumentHelp("A new URL of the same file (an expired signed link), for one transfer: its bytes are kept if the server's validator and length match, else it starts over and says why.", valueName: "url"))
    var url: String?

    func validate() throws {
        guard url == nil || selection.ids.count == 1 else { throw ValidationError("--url goes with one transfer id.") }
    }

    func run() async throws {
        if let url {
            try await forEachTransfer(selection.ids) { client, id in
                let t = try await client.resume(id, url: url)
                return "\(id) \(t.state.rawValue), from \(t.url)"
            }
            return
        }
        guard !selection.all else {
            let resumed = try await CLIConnection.connect().resumeAll(session: selection.session).transfers
            for t in resumed { Terminal.print("\(t.id) \(t.state.rawValue)") }
            if resumed.isEmpty { Terminal.print("Nothing is paused.") }
            return
        }
        try await forEachTransfer(selection.ids) { client, id in
            let t = try await client.resume(id)
            return "\(id) \(t.state.rawValue)"
        }
    }
}

struct MoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Put queued transfers first or last in the queue, or change their priority.",
        discussion: """
            The queue starts higher priorities first (high, normal, low), then the oldest. --first \
            puts a transfer ahead of every other queued one (raising its priority to theirs if \
            needed), --last behind them all (lowering it if needed). Running transfers keep \
            running.
              ferry move 42 --first
              ferry move 7 --priority low
            """
    )
    @OptionGroup var transferIDs: TransferIDs

    @Flag(help: "Where in the queue.")
    var position: TransferUpdate.Position?

    @Option(name: .long, help: ArgumentHelp("high, normal or low.", valueName: "priority"))
    var priority: TransferPriority?

    func validate() throws {
        guard position != nil || priority != nil else { throw ValidationError("Say --first, --last or --priority.") }
    }

    func run() async throws {
        try await forEachTransfer(transferIDs.ids) { client, id in
            let t = try await client.update(id, TransferUpdate(priority: priority, position: position))
            return "\(id) \(t.state.rawValue), priority \((t.priority ?? .normal).rawValue)"
        }
    }
}

extension TransferUpdate.Position: EnumerableFlag {}
extension RateSchedule.Outside: ExpressibleByArgument {}
extension TransferPriority: ExpressibleByArgument {}

struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Cancel transfers and delete their partial files.",
        discussion: "Each is reported once its download has stopped and its partial file is gone (the daemon waits up to \(Transfer.stopWait.components.seconds) seconds for a slow disk)."
    )
    @OptionGroup var transferIDs: TransferIDs

    func run() async throws {
        try await forEachTransfer(transferIDs.ids) { client, id in
            _ = try await client.cancel(id)
            return "\(id) cancelled"
        }
    }
}

struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Forget transfers (cancelling them if they run). The downloaded file stays unless --delete-file.",
        discussion: """
            --finished forgets the history: every completed and cancelled transfer (of one \
            --session), keeping their files. The daemon forgets by itself those finished more \
            than a year ago or beyond the newest 10,000 (ferry serve --history-days, \
            --history-count).
              ferry rm 3 --delete-file
              ferry rm --finished
              ferry rm --finished --session podcasts
            """
    )
    @Argument(help: "Transfer ids, as `ferry ls` shows them.")
    var ids: [Int64] = []

    @Flag(name: .long, help: "Also delete the finished file from the library.")
    var deleteFile = false

    @Flag(name: .long, help: "Forget every completed and cancelled transfer (the history); their files stay.")
    var finished = false

    @Option(name: .long, help: "With --finished: only this session's.")
    var session: String?

    func validate() throws {
        guard finished != !ids.isEmpty else { throw ValidationError("Give transfer ids, or --finished.") }
        guard !(finished && deleteFile) else { throw ValidationError("--finished keeps the files; remove transfers by id to delete theirs.") }
        guard session == nil || finished else { throw ValidationError("--session goes with --finished.") }
        if let bad = ids.first(where: { $0 <= 0 }) { throw ValidationError("\(bad) is not a transfer id; ids are positive.") }
    }

    func run() async throws {
        if finished {
            let removed = try await CLIConnection.connect().removeFinished(session: session)
            Terminal.print(removed.isEmpty ? "Nothing finished to forget." : "Forgot \(removed.count) finished transfer\(removed.count == 1 ? "" : "s").")
            return
        }
        try await forEachTransfer(ids) { client, id in
            try await client.remove(id, deleteFile: deleteFile)
            return "\(id) removed" + (deleteFile ? " (file deleted)" : "")
        }
    }
}
