import ArgumentParser
import FerryKit
import Foundation

struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Add, list and remove the people who use this Ferry from other devices.",
        discussion: """
            Each user logs in to the web app with a name and password (from a phone or laptop, \
            over `ferry remote`'s listener), syncs a phone's podcast app with the same name and \
            password, and keeps their own places in the shared library. An admin may also manage \
            users and the daemon's settings; a member listens, subscribes and downloads, and may \
            pause or cancel only their own transfers.
              ferry user add alice --admin
              printf '%s' "$PASSWORD" | ferry user add bob --password-stdin
              ferry user token bob --label "backup script"
              ferry user signout alice
            Passwords are kept as salted scrypt hashes; sessions and tokens as SHA-256 hashes.
            """,
        subcommands: [
            UserAddCommand.self, UserListCommand.self, UserPasswordCommand.self, UserRoleCommand.self, UserRemoveCommand.self,
            UserTokenCommand.self, UserTokensCommand.self, UserSessionsCommand.self, UserSignOutCommand.self, UserRevokeCommand.self,
        ]
    )
}

struct UserAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a user (a member unless --admin).",
        discussion: "Asks for the password twice (it is not shown), or reads its first line from standard input with --password-stdin."
    )

    @Argument(help: "1 to 64 letters, digits, '.', '_' or '-'.") var name: String
    @Flag(help: "An admin: may manage users and the daemon's settings.") var admin = false
    @Flag(name: .long, help: "Read the password from standard input (its first line).") var passwordStdin = false
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let password = try passwordStdin ? PasswordInput.readStdin() : PasswordInput.prompt("Password for \(name): ")
        let account = try await CLIConnection.connect().addUser(name, password: password, role: admin ? .admin : .member)
        if output.json { return try FerryJSON.encoder(pretty: true).printing(account) }
        Terminal.print("Added \(account.role.rawValue) \(account.name). `ferry remote` shows where phones and laptops reach Ferry.")
    }
}

struct UserListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the users, their roles, devices and sessions.")

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let list = try await CLIConnection.connect().users()
        if output.json { return try FerryJSON.encoder(pretty: true).printing(list) }
        guard !list.users.isEmpty else { return Terminal.print("No users yet: ferry user add NAME") }
        let width = list.users.map(\.name.count).max() ?? 0
        for user in list.users {
            let since = ISO8601DateFormatter.string(from: user.createdAt, timeZone: .current, formatOptions: [.withFullDate])
            Terminal.print(
                "  \(user.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(user.role.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0))  "
                    + "\(Self.count(user.sessions, "session"))  \(Self.count(user.tokens, "token"))  \(Self.count(user.devices, "device"))  since \(since)"
            )
        }
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}

struct UserPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd", abstract: "Give a user a new password (their web sessions end; their tokens stay)."
    )

    @Argument var name: String
    @Flag(name: .long, help: "Read the password from standard input (its first line).") var passwordStdin = false

    func run() async throws {
        let password = try passwordStdin ? PasswordInput.readStdin() : PasswordInput.prompt("New password for \(name): ")
        try await CLIConnection.connect().updateUser(name, UpdateAccountRequest(password: password))
        Terminal.print("\(name) has a new password; their web sessions have ended.")
    }
}

struct UserRoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "role", abstract: "Make a user an admin or a member.")

    @Argument var name: String
    @Argument(help: "admin or member.") var role: AccountRole

    func run() async throws {
        let account = try await CLIConnection.connect().updateUser(name, UpdateAccountRequest(role: role))
        Terminal.print("\(account.name) is now \(account.role == .admin ? "an admin" : "a member").")
    }
}

extension AccountRole: ExpressibleByArgument {}

struct UserRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Remove a user: their sessions, tokens and phones' sync end (the library's files stay)."
    )

    @Argument var name: String

    func run() async throws {
        try await CLIConnection.connect().removeUser(name)
        Terminal.print("Removed \(name).")
    }
}

struct UserTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Make an API token with the user's rights, for a script or a FerryKit program elsewhere.",
        discussion: """
            The token is shown once; send it as 'Authorization: Bearer TOKEN' to the URL \
            `ferry remote` prints. `ferry user tokens NAME` lists them; `ferry user revoke NAME ID` \
            ends one.
            """
    )

    @Argument var name: String
    @Option(help: "What it is for (shown in `ferry user tokens`).") var label: String?
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let token = try await CLIConnection.connect().makeUserToken(name, label: label)
        if output.json { return try FerryJSON.encoder(pretty: true).printing(token) }
        Terminal.print(token.token)
        Terminal.progress("A token for \(name) (id \(token.id)); it is not shown again.\n")
    }
}

struct UserTokensCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tokens", abstract: "List a user's API tokens (never their secrets).")

    @Argument var name: String
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let list = try await CLIConnection.connect().userTokens(name)
        try UserSessionsCommand.show(list, json: output.json, none: "\(name) has no tokens: ferry user token \(name)")
    }
}

struct UserSessionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sessions", abstract: "List where a user is signed in to the web app.")

    @Argument var name: String
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let list = try await CLIConnection.connect().userSessions(name)
        try Self.show(list, json: output.json, none: "\(name) is not signed in anywhere.")
    }

    static func show(_ list: AccountCredentialList, json: Bool, none: String) throws {
        if json { return try FerryJSON.encoder(pretty: true).printing(list) }
        guard !list.credentials.isEmpty else { return Terminal.print(none) }
        for credential in list.credentials {
            let used = credential.lastUsedAt.map { "last used \(Self.date($0))" } ?? "never used"
            let from = credential.address.map { " from \($0)" } ?? ""
            Terminal.print("  \(credential.id)  \(used)\(from)  \(credential.label ?? "")")
        }
    }

    static func date(_ date: Date) -> String {
        ISO8601DateFormatter.string(from: date, timeZone: .current, formatOptions: [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate, .withSpaceBetweenDateAndTime])
    }
}

struct UserSignOutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "signout", abstract: "Sign a user out of every web session.")

    @Argument var name: String

    func run() async throws {
        try await CLIConnection.connect().endUserSessions(name)
        Terminal.print("\(name) is signed out everywhere.")
    }
}

struct UserRevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "revoke", abstract: "End one of a user's tokens or sessions, by the id they are listed with.")

    @Argument var name: String
    @Argument(help: "The id `ferry user tokens` or `ferry user sessions` shows.") var id: String

    func run() async throws {
        let client = try await CLIConnection.connect()
        do {
            try await client.removeUserToken(name, id: id)
        } catch let error as FerryError where error.code == .notFound {
            try await client.endUserSessions(name, id: id)
        }
        Terminal.print("Ended \(id) of \(name).")
    }
}
