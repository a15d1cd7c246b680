import ArgumentParser
import FerryKit
import FerryServer
import Foundation

struct Aria2Command: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aria2",
        abstract: "Drive Ferry from aria2's front ends and client libraries (its JSON-RPC).",
        discussion: """
            Start the daemon with `ferry serve --aria2-rpc`, or turn the RPC on for every start \
            with `ferry aria2 enable`: it answers aria2's JSON-RPC at \
            http://127.0.0.1:6800/jsonrpc. Give the front end (AriaNg, webui-aria2, aria2p) that \
            address and the secret `ferry aria2 secret` prints. What it adds is an ordinary \
            Ferry transfer in the session `aria2`; every transfer is an aria2 download to it.

            Examples:
              ferry aria2 enable && ferry service restart
              ferry aria2 enable --port 6801
              ferry aria2 status --json
            """,
        subcommands: [Aria2SecretCommand.self, Aria2EnableCommand.self, Aria2DisableCommand.self, Aria2StatusCommand.self]
    )
}

struct Aria2SecretCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret", abstract: "Print the aria2 RPC's secret (made on first use, kept like the API token)."
    )

    func run() throws {
        let paths = FerryPaths.resolve()
        Terminal.print(try SecretFile.loadOrCreate(paths.aria2Secret, in: paths.state))
    }
}

/// The daemon setting: a file in the state folder holding the port, read by `ferry serve`.
enum Aria2Setting {
    static func port(_ paths: FerryPaths) -> Int? {
        ListenerSettingFiles(paths: paths).aria2Port()
    }
}

struct Aria2EnableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enable", abstract: "Answer aria2's JSON-RPC at every start of the daemon (from its next start)."
    )

    @Option(name: .long, help: ArgumentHelp("The port (default 6800, as aria2's; 0: a free one at each start, shown by `ferry status`).", valueName: "port"))
    var port: Int = Aria2Listener.defaultPort

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
    }

    func run() throws {
        let paths = FerryPaths.resolve()
        try ListenerSettingFiles(paths: paths).setAria2Port(port)
        let place = port == 0 ? "on a free port (`ferry status` names it)" : "at http://127.0.0.1:\(port)/jsonrpc"
        Terminal.print("The aria2 RPC will answer \(place) from the daemon's next start (`ferry service restart`, or stop and start `ferry serve`); its secret: `ferry aria2 secret`.")
    }
}

struct Aria2DisableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disable", abstract: "Stop answering aria2's JSON-RPC at every start (`ferry serve --aria2-rpc` still does)."
    )

    func run() throws {
        let paths = FerryPaths.resolve()
        try ListenerSettingFiles(paths: paths).setAria2Port(nil)
        Terminal.print("The aria2 RPC is off from the daemon's next start.")
    }
}

struct Aria2StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Whether the aria2 RPC is on at every start, and where the running daemon answers it."
    )

    @Flag(name: .long, help: "Print JSON: {enabled, port, url}.")
    var json = false

    func run() async throws {
        let paths = FerryPaths.resolve()
        let port = Aria2Setting.port(paths)
        var url: String?
        if let client = await DaemonConnector(paths: paths).running() { url = try? await client.status().aria2URL }
        if json {
            var object: [String: Any] = ["enabled": port != nil]
            if let port { object["port"] = port }
            if let url { object["url"] = url }
            Terminal.print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self))
            return
        }
        Terminal.print(port.map { "On at every start, port \($0)." } ?? "Off unless the daemon is started with --aria2-rpc.")
        Terminal.print(url.map { "The running daemon answers at \($0)." } ?? "The running daemon does not answer it (or no daemon runs).")
    }
}
