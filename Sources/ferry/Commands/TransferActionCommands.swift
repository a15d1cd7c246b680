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
        discussion: "Each is reported once its download has stopped and its bytes are safe on disk (the daemon waits up to \(Transfer.stopWait.components.seconds) seconds for a slow disk); the byte count shown is where `ferry resume` continues."
    )
    @OptionGroup var transferIDs: TransferIDs

    func run() async throws {
        try await forEachTransfer(transferIDs.ids) { client, id in
            let t = try await client.pause(id)
            return "\(id) paused at \(Format.progress(t))"
        }
    }
}

struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Resume paused or failed transfers from the bytes on disk (or retry a waiting one now)."
    )
    @OptionGroup var transferIDs: TransferIDs

    func run() async throws {
        try await forEachTransfer(transferIDs.ids) { client, id in
            let t = try await client.resume(id)
            return "\(id) \(t.state.rawValue)"
        }
    }
}

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
        abstract: "Forget transfers (cancelling them if they run). The downloaded file stays unless --delete-file."
    )
    @OptionGroup var transferIDs: TransferIDs

    @Flag(name: .long, help: "Also delete the finished file from the library.")
    var deleteFile = false

    func run() async throws {
        try await forEachTransfer(transferIDs.ids) { client, id in
            try await client.remove(id, deleteFile: deleteFile)
            return "\(id) removed" + (deleteFile ? " (file deleted)" : "")
        }
    }
}
