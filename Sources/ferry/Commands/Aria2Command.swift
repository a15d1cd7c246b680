import ArgumentParser
import FerryKit
import Foundation

struct Aria2Command: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aria2",
        abstract: "Drive Ferry from aria2's front ends and client libraries (its JSON-RPC).",
        discussion: """
            Start the daemon with `ferry serve --aria2-rpc`: it answers aria2's JSON-RPC at \
            http://127.0.0.1:6800/jsonrpc. Give the front end (AriaNg, webui-aria2, aria2p) that \
            address and the secret `ferry aria2 secret` prints. What it adds is an ordinary \
            Ferry transfer in the session `aria2`; every transfer is an aria2 download to it.
            """,
        subcommands: [Aria2SecretCommand.self]
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
