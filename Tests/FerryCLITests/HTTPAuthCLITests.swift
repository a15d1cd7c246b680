import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// `ferry get` against servers that ask who the user is, through the real binary and daemon:
/// --user with --password-stdin, --netrc-file (a readable one refused, nothing journaled), the
/// credential store (refused over plain http unless allowed), a wrong password; no password in
/// any output or in the daemon's log.
@Suite(.serialized) struct HTTPAuthCLITests {
    static let file = Origin.File(data: Origin.bytes(200_000))

    static func transfers(_ home: URL) async throws -> [Transfer] {
        let list = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
        return try FerryJSON.decoder().decode([Transfer].self, from: Data(list.stdout.utf8))
    }

    @Test func userAndPasswordFromStandardInput() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Self.file)
            origin.protect("/f", OriginLogin([.digestSHA256], user: "ann", password: "cli-secret-1"))
            try await CommandRunner.withHome { home in
                let url = base.appendingPathComponent("f").absoluteString
                let got = try await CommandRunner.ferry(["get", url, "--user", "ann", "--password-stdin"], home: home, input: "cli-secret-1\n")
                #expect(got.status == 0, "\(got)")
                #expect(origin.requests(for: "/f").last?.authorization?.contains("algorithm=SHA-256") == true)
                let list = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
                #expect(list.stdout.contains("<redacted>") && !list.stdout.contains("cli-secret-1"), "\(list.stdout)")
                let wrong = try await CommandRunner.ferry(["get", "--force", url, "--user", "ann", "--password-stdin"], home: home, input: "nope\n")
                #expect(wrong.status != 0)
                #expect(wrong.stdout.contains("refused the user ann's password for 127.0.0.1") || wrong.stderr.contains("refused the user ann's password for 127.0.0.1"), "\(wrong)")
                let lonely = try await CommandRunner.ferry(["get", url, "--password-stdin"], home: home, input: "x\n")
                #expect(lonely.status != 0 && lonely.stderr.contains("give --user NAME too"), "\(lonely)")
                _ = try await CommandRunner.ferry(["stop"], home: home)
                let log = (try? String(contentsOf: home.appendingPathComponent("state/daemon.log"), encoding: .utf8)) ?? ""
                #expect(!log.contains("cli-secret-1"))
            }
        }
    }

    @Test func netrcFileReadableByOthersIsRefusedAndNothingIsQueued() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Self.file)
            origin.protect("/f", OriginLogin([.digestMD5], user: "net", password: "netrc-secret-2"))
            try await CommandRunner.withHome { home in
                let netrc = home.appendingPathComponent("my netrc")
                try Data("machine 127.0.0.1 login net password netrc-secret-2\n".utf8).write(to: netrc)
                chmod(netrc.path, 0o644)
                let url = base.appendingPathComponent("f").absoluteString
                let refused = try await CommandRunner.ferry(["get", "--netrc-file", netrc.path, "--auth-over-http", url], home: home)
                #expect(refused.status != 0)
                #expect(refused.stderr.contains("can be read by other users (mode 644)") && refused.stderr.contains("chmod 600"), "\(refused)")
                #expect(try await Self.transfers(home).isEmpty)
                // Garbage: named by line, nothing queued.
                let garbage = home.appendingPathComponent("garbage")
                try Data("machine 127.0.0.1\nlogin net\npasswd x\n".utf8).write(to: garbage)
                chmod(garbage.path, 0o600)
                let unreadable = try await CommandRunner.ferry(["get", "--netrc-file", garbage.path, url], home: home)
                #expect(unreadable.status != 0 && unreadable.stderr.contains("garbage, line 3: a word that is not a .netrc keyword"), "\(unreadable)")
                #expect(try await Self.transfers(home).isEmpty)
                chmod(netrc.path, 0o600)
                // Plain http: a .netrc password needs the user's consent.
                let plain = try await CommandRunner.ferry(["get", "--netrc-file", netrc.path, url], home: home)
                #expect(plain.status != 0)
                #expect((plain.stdout + plain.stderr).contains("--auth-over-http"), "\(plain)")
                let got = try await CommandRunner.ferry(["get", "--force", "--netrc-file", netrc.path, "--auth-over-http", url], home: home)
                #expect(got.status == 0, "\(got)")
                #expect(try await Self.transfers(home).contains { $0.state == .completed && $0.sha256 == Self.file.sha256 })
                let list = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
                #expect(!list.stdout.contains("netrc-secret-2"))
            }
        }
    }

    @Test func theCredentialStore() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Self.file)
            origin.protect("/f", OriginLogin([.basic, .digestMD5], user: "kept", password: "store-secret-3"))
            try await CommandRunner.withHome { home in
                func ferry(_ arguments: String..., input: String? = nil) async throws -> CommandRunner.Output {
                    try await CommandRunner.ferry(arguments, home: home, input: input)
                }
                let bad = try await ferry("credentials", "add", "https://127.0.0.1/x", "--user", "kept", "--password-stdin", input: "x\n")
                #expect(bad.status != 0 && bad.stderr.contains("is not a host name"), "\(bad)")
                let added = try await ferry("credentials", "add", "127.0.0.1", "--user", "kept", "--password-stdin", input: "store-secret-3\n")
                #expect(added.status == 0, "\(added)")
                let list = try await ferry("credentials", "ls", "--json")
                let kept = try FerryJSON.decoder().decode(HostCredentialList.self, from: Data(list.stdout.utf8))
                #expect(kept.credentials.map(\.host) == ["127.0.0.1"] && kept.credentials.first?.user == "kept")
                #expect(!list.stdout.contains("store-secret-3"))
                #expect(try await ferry("credentials", "ls").stdout.contains("127.0.0.1  kept"))
                let url = base.appendingPathComponent("f").absoluteString
                let plain = try await ferry("get", url)
                #expect(plain.status != 0)
                #expect((plain.stdout + plain.stderr).contains("from the credential store, but will not send it"), "\(plain)")
                #expect(origin.requests.allSatisfy { $0.authorization == nil })
                let allowed = try await ferry("get", "--force", "--auth-over-http", url)
                #expect(allowed.status == 0, "\(allowed)")
                #expect(origin.requests.last?.authorization?.hasPrefix("Digest ") == true)
                // Or for a whole session.
                let session = try await ferry("session", "set", "lan", "--auth-over-http", "--user", "kept", "--password-stdin", input: "store-secret-3\n")
                #expect(session.status == 0, "\(session)")
                #expect(session.stdout.contains("logins over http allowed") && session.stdout.contains("user            kept (password <redacted>)"), "\(session.stdout)")
                #expect(!(try await ferry("session", "show", "lan", "--json")).stdout.contains("store-secret-3"))
                #expect(try await ferry("get", "--session", "lan", url).status == 0)
                #expect(try await ferry("credentials", "rm", "127.0.0.1").status == 0)
                #expect(try await ferry("credentials", "ls").stdout.contains("No logins kept"))
                let gone = try await ferry("credentials", "rm", "127.0.0.1")
                #expect(gone.status != 0 && gone.stderr.contains("No login is kept for 127.0.0.1"), "\(gone)")
            }
        }
    }

    @Test func putWithUserAndPasswordFromStandardInput() async throws {
        try await UploadReceiver.run { receiver, base in
            receiver.protect(OriginLogin([.digestMD5], user: "ann", password: "put-secret-4"))
            try await CommandRunner.withHome { home in
                let file = home.appendingPathComponent("episode.mp3")
                try Origin.bytes(50_000).write(to: file)
                let put = try await CommandRunner.ferry(
                    ["put", file.path, base.appendingPathComponent("tus").absoluteString, "--user", "ann", "--password-stdin"], home: home, input: "put-secret-4\n"
                )
                #expect(put.status == 0, "\(put)")
                #expect(receiver.completed.first?.body == (try Data(contentsOf: file)))
                let list = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
                #expect(!list.stdout.contains("put-secret-4"))
            }
        }
    }
}
