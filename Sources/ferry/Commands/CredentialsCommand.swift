import ArgumentParser
import FerryKit
import Foundation

struct CredentialsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credentials",
        abstract: "Keep a user name and password for a host, answered when it asks who you are.",
        discussion: """
            When a server answers 401 (it wants a login), Ferry answers with Basic or Digest \
            (the strongest it offers) using, in this order: the URL's user:password@, `get \
            --user NAME --password-stdin`, a .netrc (`get --netrc`), then the login kept here \
            for the host. A kept login goes to its host only (example.com:8443 for that port \
            only), never to a host a redirect leads to, and only over https unless a download \
            says --auth-over-http. The daemon keeps passwords in its journal; they are never \
            shown, and `ferry backup` keeps them only sealed (--with-secrets).
              ferry credentials add files.example.com --user ann
              printf '%s\\n' "$PASSWORD" | ferry credentials add files.example.com --user ann --password-stdin
              ferry credentials ls
              ferry credentials rm files.example.com
            """,
        subcommands: [CredentialsAddCommand.self, CredentialsListCommand.self, CredentialsRemoveCommand.self]
    )
}

struct CredentialsAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Keep a login for a host (replacing the one it had).",
        discussion: "Asks for the password twice (it is not shown), or reads its first line from standard input with --password-stdin."
    )

    @Argument(help: "The host: example.com, or example.com:8443 for that port only (not a URL).") var host: String
    @Option(name: .long, help: ArgumentHelp("The user name to log in as.", valueName: "name")) var user: String
    @Flag(name: .long, help: "Read the password from standard input (its first line).") var passwordStdin = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        do { _ = try HostCredential.normalizedHost(host) } catch { throw ValidationError(error.message) }
    }

    func run() async throws {
        let password = try passwordStdin ? PasswordInput.readStdin() : PasswordInput.prompt("Password of \(user) at \(host): ")
        let kept = try await CLIConnection.connect().addCredential(host: host, user: user, password: password)
        if output.json { return try FerryJSON.encoder(pretty: true).printing(kept) }
        Terminal.print("Kept \(kept.user)'s login for \(kept.host): sent over https when \(kept.host) asks who you are.")
    }
}

struct CredentialsListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the kept logins (never their passwords).")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let list = try await CLIConnection.connect().credentials()
        if output.json { return try FerryJSON.encoder(pretty: true).printing(list) }
        guard !list.credentials.isEmpty else { return Terminal.print("No logins kept: ferry credentials add HOST --user NAME") }
        let width = list.credentials.map(\.host.count).max() ?? 0
        for credential in list.credentials {
            let since = ISO8601DateFormatter.string(from: credential.addedAt, timeZone: .current, formatOptions: [.withFullDate])
            Terminal.print("  \(credential.host.padding(toLength: width, withPad: " ", startingAt: 0))  \(credential.user)  since \(since)")
        }
    }
}

struct CredentialsRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Forget the login kept for a host.")

    @Argument(help: "The host as `ferry credentials ls` shows it.") var host: String

    func run() async throws {
        try await CLIConnection.connect().removeCredential(host: host)
        Terminal.print("Forgot the login for \(host).")
    }
}
