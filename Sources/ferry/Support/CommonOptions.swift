import ArgumentParser
import FerryKit
import Foundation

/// `--json`, shared by commands that print transfers.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print machine-readable JSON (stable keys: id, url, session, state, bytesReceived, totalBytes, path, sha256, error).")
    var json = false
}

/// Transfer ids given on the command line.
struct TransferIDs: ParsableArguments {
    @Argument(help: "Transfer ids, as `ferry ls` shows them.")
    var ids: [Int64]

    func validate() throws {
        guard !ids.isEmpty else { throw ValidationError("Give at least one transfer id (see `ferry ls`).") }
        if let bad = ids.first(where: { $0 <= 0 }) { throw ValidationError("\(bad) is not a transfer id; ids are positive.") }
    }
}

/// Transfer ids, or `--all` (of one `--session`, or every one).
struct TransferSelection: ParsableArguments {
    @Argument(help: "Transfer ids, as `ferry ls` shows them.")
    var ids: [Int64] = []

    @Flag(name: .long, help: "Every transfer (of --session, if given).")
    var all = false

    @Option(name: .long, help: "With --all: only this session's transfers.")
    var session: String?

    func validate() throws {
        guard all != !ids.isEmpty else { throw ValidationError("Give transfer ids, or --all (see `ferry ls`).") }
        guard session == nil || all else { throw ValidationError("--session goes with --all.") }
        if let bad = ids.first(where: { $0 <= 0 }) { throw ValidationError("\(bad) is not a transfer id; ids are positive.") }
    }
}

/// How CLI commands reach the daemon: through `daemon.json`, starting `ferry serve --detach`
/// (this very executable) when it is not running.
enum CLIConnection {
    static var paths: FerryPaths { .resolve() }

    static var connector: DaemonConnector {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return DaemonConnector(paths: paths, launcher: DaemonLauncher(executable: executable))
    }

    static func connect() async throws -> DaemonClient {
        try await connector.connect()
    }
}

extension JSONEncoder {
    func printing<Value: Encodable>(_ value: Value) throws {
        Terminal.print(String(decoding: try encode(value), as: UTF8.self))
    }
}
