import ArgumentParser
import FerryKit
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync with a phone's podcast app (AntennaPod, gPodder, Kasts) through the gpodder.net API.",
        discussion: """
            Start the daemon with a sync listener, add a user, and point the phone's app at it \
            (AntennaPod: Settings → Synchronization → gpodder.net, custom server):
              ferry serve --sync-listen 0.0.0.0:8123
              ferry sync user add alice
            Subscriptions and positions then go both ways, per user: a podcast added on alice's \
            phone appears in alice's web app, and an episode stopped on the phone resumes there at \
            that second (log in as alice, or `ferry open --user alice` on this machine).
            """,
        subcommands: [SyncUserCommand.self]
    )
}

struct SyncUserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Add, list or remove the users phones sync as (the accounts of `ferry user`).",
        subcommands: [SyncUserAddCommand.self, SyncUserListCommand.self, SyncUserRemoveCommand.self]
    )
}

struct SyncUserAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a sync user, or give one a new password.",
        discussion: """
            Asks for the password twice (it is not shown), or reads it from standard input with \
            --password-stdin. It is kept as a salted scrypt hash, separate from the API token.
              ferry sync user add alice
              printf '%s' "$PASSWORD" | ferry sync user add alice --password-stdin
            """
    )

    @Argument(help: "1 to 64 letters, digits, '.', '_' or '-'.")
    var name: String

    @Flag(name: .long, help: "Read the password from standard input (its first line).")
    var passwordStdin = false

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let password = try passwordStdin ? PasswordInput.readStdin() : PasswordInput.prompt("Password for the sync user: ")
        let client = try await CLIConnection.connect()
        let user = try await client.setSyncUser(name, password: password)
        if output.json { return try FerryJSON.encoder(pretty: true).printing(user) }
        let url = try await client.syncUsers().url
        Terminal.print("Sync user \(user.name) is ready." + (url.map { " Phones sync at \($0)." } ?? " Start the sync listener with `ferry serve --sync-listen ADDRESS:PORT`."))
    }
}

struct SyncUserListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the sync users and where phones sync.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let list = try await CLIConnection.connect().syncUsers()
        if output.json { return try FerryJSON.encoder(pretty: true).printing(list) }
        Terminal.print(list.url.map { "Sync API: \($0)" } ?? "Sync API: off (ferry serve --sync-listen ADDRESS:PORT)")
        guard !list.users.isEmpty else { return Terminal.print("No sync users yet: ferry sync user add NAME") }
        for user in list.users {
            Terminal.print("  \(user.name)  \(user.devices) device\(user.devices == 1 ? "" : "s")  since \(ISO8601DateFormatter.string(from: user.createdAt, timeZone: .current, formatOptions: [.withFullDate]))")
        }
    }
}

struct SyncUserRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a sync user (its phones can no longer sync).")

    @Argument var name: String

    func run() async throws {
        try await CLIConnection.connect().removeSyncUser(name)
        Terminal.print("Removed sync user \(name).")
    }
}
