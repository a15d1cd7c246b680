import ArgumentParser
import FerryKit
import Foundation

struct ExtensionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extension",
        abstract: "Pair Ferry's browser extension with the daemon, see whether one is paired, or revoke it.",
        discussion: """
            The extension (extensions/chromium/ in Ferry's sources; load it unpacked from \
            chrome://extensions with Developer mode on) sends links, images, audio and video to \
            Ferry, and can take over the browser's own downloads, with the page's cookies, \
            referrer and user agent. It talks to the daemon with a token of its own, which may \
            create and read transfers and nothing else (no hooks, no settings, no files).

            To pair: run `ferry extension pair`, open the extension's options page, and enter \
            the daemon's address and the code it printed (valid five minutes, once). Pairing \
            again replaces the earlier extension's token.

            Examples:
              ferry extension pair                 a code for the options page
              ferry extension status --json        the pairing (since when, from where)
              ferry extension revoke               the extension must pair again
            """,
        subcommands: [ExtensionPairCommand.self, ExtensionStatusCommand.self, ExtensionRevokeCommand.self]
    )
}

struct ExtensionPairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Print a one-time code that pairs the browser extension (valid five minutes, once).",
        discussion: "Starts the daemon if it is not running. --json prints {code, expiresInSeconds, daemonURL}."
    )

    @Flag(name: .long, help: "Print JSON: {code, expiresInSeconds, daemonURL}.")
    var json = false

    func run() async throws {
        let code = try await CLIConnection.connect().extensionPairingCode()
        if json { return try FerryJSON.encoder(pretty: true).printing(code) }
        Terminal.print("In the extension's options page, enter:")
        Terminal.print("  Daemon address: \(code.daemonURL)")
        Terminal.print("  Pairing code:   \(code.code)")
        Terminal.print("The code works once, for \(code.expiresInSeconds / 60) minutes.")
    }
}

struct ExtensionStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Whether a browser extension is paired, since when, and from which origin.")

    @Flag(name: .long, help: "Print JSON: {paired, pairedAt, origin}.")
    var json = false

    func run() async throws {
        let status = try await CLIConnection.connect().extensionStatus()
        if json { return try FerryJSON.encoder(pretty: true).printing(status) }
        Terminal.print(Self.describe(status))
    }

    static func describe(_ status: ExtensionStatus) -> String {
        guard status.paired else { return "No browser extension is paired (ferry extension pair)." }
        let since = status.pairedAt.map { " since " + ISO8601DateFormatter.string(from: $0, timeZone: .current, formatOptions: [.withInternetDateTime]) } ?? ""
        return "A browser extension is paired\(since)" + (status.origin.map { ", from \($0)." } ?? ".")
    }
}

struct ExtensionRevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Invalidate the browser extension's token: its requests are refused until it pairs again.",
        discussion: "Unused pairing codes are forgotten too. --json prints what was paired: {paired, pairedAt, origin}."
    )

    @Flag(name: .long, help: "Print JSON: what was paired before, {paired, pairedAt, origin}.")
    var json = false

    func run() async throws {
        let before = try await CLIConnection.connect().revokeExtension()
        if json { return try FerryJSON.encoder(pretty: true).printing(before) }
        Terminal.print(before.paired ? "Revoked the browser extension's token; it must pair again (ferry extension pair)." : "No browser extension was paired.")
    }
}
