import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// `ferry user` with the real binary: accounts, their roles, tokens and sessions.
@Suite(.serialized) struct UserCLITests {
    @Test func usersAreAddedListedAndRemoved() async throws {
        try await CommandRunner.withHome { home in
            func ferry(_ arguments: String..., input: String? = nil) async throws -> CommandRunner.Output {
                try await CommandRunner.ferry(arguments, home: home, input: input)
            }
            let none = try await ferry("user", "ls")
            #expect(none.status == 0 && none.stdout.contains("No users yet"), "\(none)")
            let noTerminal = try await ferry("user", "add", "alice")
            #expect(noTerminal.status != 0 && noTerminal.stderr.contains("--password-stdin"), "\(noTerminal)")
            let add = try await ferry("user", "add", "alice", "--password-stdin", input: "alice's password\n")
            #expect(add.status == 0 && add.stdout.contains("Added member alice"), "\(add)")
            let admin = try await ferry("user", "add", "bob", "--admin", "--password-stdin", "--json", input: "bob's password\n")
            let bob = try FerryJSON.decoder().decode(Account.self, from: Data(admin.stdout.utf8))
            #expect(bob.name == "bob" && bob.role == .admin, "\(admin)")
            let again = try await ferry("user", "add", "alice", "--password-stdin", input: "another password\n")
            #expect(again.status != 0 && again.stderr.contains("already a user 'alice'") && again.stderr.contains("ferry user passwd alice"), "\(again)")
            let badRole = try await ferry("user", "role", "alice", "root")
            #expect(badRole.status != 0 && badRole.stderr.contains("admin"), "\(badRole)")

            let ls = try await ferry("user", "ls")
            #expect(ls.stdout.contains("alice") && ls.stdout.contains("member") && ls.stdout.contains("bob") && ls.stdout.contains("admin"), "\(ls)")

            // A token: its secret alone on stdout, once; listed by id and label.
            let token = try await ferry("user", "token", "alice", "--label", "backup script")
            let secret = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(token.status == 0 && secret.hasPrefix("ferry_") && !secret.contains(" "), "\(token)")
            let daemon = try #require(CommandRunner.daemonInfo(home: home))
            let client = DaemonClient(baseURL: daemon.url, token: secret)
            #expect(try await client.signedIn().user == "alice")
            let tokens = try await ferry("user", "tokens", "alice")
            #expect(tokens.stdout.contains("backup script") && !tokens.stdout.contains(secret), "\(tokens)")
            let id = try #require(tokens.stdout.split(separator: " ", omittingEmptySubsequences: true).first.map(String.init))
            let revoke = try await ferry("user", "revoke", "alice", id)
            #expect(revoke.status == 0, "\(revoke)")
            await #expect(throws: FerryError.self) { _ = try await client.signedIn() }
            let unknown = try await ferry("user", "revoke", "alice", "nope")
            #expect(unknown.status != 0 && unknown.stderr.contains("no session 'nope'"), "\(unknown)")

            let passwd = try await ferry("user", "passwd", "alice", "--password-stdin", input: "a new password\n")
            #expect(passwd.status == 0 && passwd.stdout.contains("new password"), "\(passwd)")
            let role = try await ferry("user", "role", "alice", "admin")
            #expect(role.status == 0 && role.stdout.contains("alice is now an admin"), "\(role)")
            let sessions = try await ferry("user", "sessions", "alice")
            #expect(sessions.status == 0 && sessions.stdout.contains("not signed in"), "\(sessions)")
            let signout = try await ferry("user", "signout", "alice")
            #expect(signout.status == 0, "\(signout)")
            let removed = try await ferry("user", "rm", "alice")
            #expect(removed.status == 0, "\(removed)")
            let gone = try await ferry("user", "rm", "alice")
            #expect(gone.status != 0 && gone.stderr.contains("no user 'alice'"), "\(gone)")
            let help = try await ferry("user", "--help")
            #expect(help.stdout.contains("ferry user add alice --admin"), "\(help)")
        }
    }
}
