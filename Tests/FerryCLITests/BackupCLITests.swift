import FerryKit
import FerryTestSupport
import Foundation
import GRDB
import Testing

/// `ferry backup` while downloads run, `ferry restore` on "another machine" (a fresh FERRY_HOME
/// at another path, the library copied beside): the same transfers, podcasts, positions,
/// accounts and secrets; nothing restored with a wrong passphrase or from a newer Ferry.
@Suite(.serialized) struct BackupCLITests {
    @Test func aBackupMadeWhileDownloadingRestoresOnAnotherMachine() async throws {
        try await Origin.run { origin, base in
            for n in 1...20 { origin.serve("/f\(n)", .init(data: Origin.bytes(2000 + n, seed: UInt64(n)))) }
            let held = Origin.Gate()
            let slow = Origin.bytes(300_000, seed: 99)
            origin.serve("/slow", .init(data: slow, etag: "\"s\""))
            origin.script("/slow", [.holdAfter(100_000, held)])
            origin.serve("/media/ep1.mp3", .init(data: Origin.bytes(30_000, seed: 7), contentType: "audio/mpeg"))
            let feed = TestFeed(
                title: "Night Shift",
                items: [1, 2].map {
                    TestFeed.Item(guid: "g\($0)", title: "Part \($0)", published: "Fri, 0\($0) Mar 2024 06:00:00 GMT",
                                  enclosure: base.appendingPathComponent("media/ep\($0).mp3").absoluteString)
                }
            )
            origin.serve("/night.xml", .init(data: feed.data))
            origin.serve("/mine", .init(data: Origin.bytes(5000, seed: 5)))
            origin.protect("/mine", OriginLogin([.digestMD5], user: "me", password: "user-sekrit-6"))
            origin.serve("/kept", .init(data: Origin.bytes(6000, seed: 6)))
            origin.protect("/kept", OriginLogin([.basic], user: "keeper", password: "store-sekrit-5"))
            try await CommandRunner.withHome { old in
                try await CommandRunner.withHome { new in
                    func ferry(_ home: URL, _ arguments: String..., input: String? = nil) async throws -> CommandRunner.Output {
                        try await CommandRunner.ferry(arguments, home: home, input: input)
                    }
                    // A household's Ferry: downloads, a podcast listened to, an account, a secret header.
                    let list = old.appendingPathComponent("urls.txt")
                    try (1...20).map { base.appendingPathComponent("f\($0)").absoluteString }.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
                    #expect(try await ferry(old, "get", "-i", list.path).status == 0)
                    #expect(try await ferry(old, "podcast", "add", base.appendingPathComponent("night.xml").absoluteString).status == 0)
                    #expect(try await ferry(old, "user", "add", "alice", "--password-stdin", input: "alice's password\n").status == 0)
                    // A login in the credential store, and a download with its own password.
                    #expect(try await ferry(old, "credentials", "add", "127.0.0.1", "--user", "keeper", "--password-stdin", input: "store-sekrit-5\n").status == 0)
                    let mine = try await ferry(old, "get", base.appendingPathComponent("mine").absoluteString, "--user", "me", "--password-stdin", input: "user-sekrit-6\n")
                    #expect(mine.status == 0, "\(mine)")
                    let client = try Self.client(old)
                    let episodes = try await client.podcast(try #require(try await client.podcasts().first).id).episodes
                    let part1 = try #require(episodes.first { $0.title == "Part 1" })
                    _ = try await client.downloadEpisode(part1.id, session: "cli")
                    try await eventually("the episode downloaded") { try await client.podcast(part1.podcastId).episodes.first { $0.id == part1.id }?.state == .downloaded }
                    _ = try await client.updatePlayback(episode: part1.id, .init(positionSeconds: 321.5, durationSeconds: 1800))
                    _ = try await client.updateSessionConfiguration("cli", .init(set: TransferOptions(headers: ["Authorization": "Bearer sekrit-4711", "X-Plain": "kept"])))
                    _ = try await client.importCookies("127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\tcookie-5150\n", session: "mtls")
                    let identity = try TestAuthority(name: "Backup Lab CA").issue("client", in: old)
                    _ = try await client.updateSessionConfiguration("mtls", .init(set: TransferOptions(
                        clientCertificate: identity.chain.path, clientKey: identity.key.path, clientKeyPassphrase: "pass-9913"
                    )))
                    let running = try await ferry(old, "get", "--no-wait", base.appendingPathComponent("slow").absoluteString)
                    #expect(running.status == 0, "\(running)")
                    try await eventually("the slow download to run") { origin.bytesSent("/slow") >= 100_000 }
                    let before = try Self.transfers(try await ferry(old, "ls", "--all", "--json"))
                    #expect(before.count == 23 && before.contains { $0.state == .running })

                    let passphrase = old.appendingPathComponent("passphrase")
                    try "correct horse battery staple\n".write(to: passphrase, atomically: true, encoding: .utf8)
                    let backup = old.appendingPathComponent("ferry.backup")
                    let made = try await ferry(old, "backup", backup.path, "--with-secrets", "--passphrase-file", passphrase.path, "--json")
                    #expect(made.status == 0, "\(made)")
                    let plain = old.appendingPathComponent("plain.backup")
                    #expect(try await ferry(old, "backup", plain.path).status == 0)
                    #expect(try await ferry(old, "backup", plain.path).stderr.contains("--force"), "an existing backup is not replaced unasked")
                    for file in [backup, plain] {
                        let bytes = try Data(contentsOf: file)
                        for secret in ["sekrit-4711", "store-sekrit-5", "user-sekrit-6", "pass-9913", "cookie-5150"] {
                            #expect(bytes.range(of: Data(secret.utf8)) == nil, "no \(secret) in the clear in \(file.lastPathComponent)")
                        }
                        #expect(bytes.range(of: Data("X-Plain".utf8)) != nil)
                    }
                    held.open()
                    _ = try await ferry(old, "stop")

                    // "Another machine": the library copied over, then the backup restored.
                    try FileManager.default.copyItem(at: old.appendingPathComponent("library"), to: new.appendingPathComponent("library"))
                    let wrong = new.appendingPathComponent("wrong")
                    try "Tr0ub4dor&3\n".write(to: wrong, atomically: true, encoding: .utf8)
                    let refused = try await ferry(new, "restore", backup.path, "--passphrase-file", wrong.path)
                    #expect(refused.status == 1 && refused.stderr.contains("passphrase does not open"), "\(refused)")
                    #expect(!FileManager.default.fileExists(atPath: new.appendingPathComponent("state/journal.sqlite").path), "nothing restored")

                    let restored = try await ferry(new, "restore", backup.path, "--passphrase-file", passphrase.path)
                    #expect(restored.status == 0, "\(restored)")
                    #expect(restored.stdout.contains("Restored 23 transfers, 1 podcasts and 1 accounts"), "\(restored)")
                    #expect(restored.stdout.contains("Secrets restored.") && restored.stdout.contains("All 22 finished downloads' files are in"), "\(restored)")
                    #expect(try String(contentsOf: new.appendingPathComponent("state/token"), encoding: .utf8) == String(contentsOf: old.appendingPathComponent("state/token"), encoding: .utf8))

                    let after = try Self.transfers(try await ferry(new, "ls", "--all", "--json"))
                    #expect(after.map(\.id) == before.map(\.id) && after.map(\.url) == before.map(\.url))
                    for (was, now) in zip(before, after) where was.state == .completed {
                        #expect(now.state == .completed && now.sha256 == was.sha256 && now.totalBytes == was.totalBytes)
                        #expect(now.path == was.path?.replacingOccurrences(of: old.path, with: new.path), "found in the new library: \(String(describing: now.path))")
                    }
                    let newClient = try Self.client(new)
                    let podcast = try #require(try await newClient.podcasts().first)
                    #expect(podcast.title == "Night Shift")
                    let kept = try #require(try await newClient.podcast(podcast.id).episodes.first { $0.title == "Part 1" })
                    #expect(kept.state == .downloaded && kept.playback?.positionSeconds == 321.5, "\(kept)")
                    #expect(try await ferry(new, "user", "ls").stdout.contains("alice"))
                    // The store's login came back sealed, and answers its host again.
                    #expect(try await ferry(new, "credentials", "ls").stdout.contains("127.0.0.1  keeper"))
                    // (In another session: the cli session sends its own Authorization header, which wins.)
                    let keptLogin = try await ferry(new, "get", "--session", "other", "--auth-over-http", base.appendingPathComponent("kept").absoluteString)
                    #expect(keptLogin.status == 0, "\(keptLogin)")
                    #expect(after.first { $0.url.hasSuffix("/mine") }?.options?.password == "<redacted>", "the download's password is back (shown redacted)")
                    #expect(try await newClient.sessionConfiguration("cli").options.headers?["X-Plain"] == "kept")
                    #expect(try await newClient.sessionConfiguration("cli").options.headers?["Authorization"] == "<redacted>", "the secret header is back (shown redacted)")
                    let mtls = try await newClient.sessionConfiguration("mtls").options
                    #expect(mtls.clientKeyPassphrase == "<redacted>" && mtls.clientKey == identity.key.path, "the key's passphrase is back (shown redacted)")
                    #expect(try await newClient.exportCookies(session: "mtls").contains("\tsid\tcookie-5150"), "the session's cookies are back")
                    // The download that was running when the backup was made goes on here.
                    let slowId = try #require(before.first { $0.state == .running }?.id)
                    try await eventually("the restored queue to finish the slow download") { try await newClient.transfer(slowId).state == .completed }
                    #expect(try await newClient.transfer(slowId).sha256 == Origin.sha256(slow))

                    // Into a Ferry that is in use: refused.
                    _ = try await ferry(new, "stop")
                    let busy = try await ferry(new, "restore", plain.path)
                    #expect(busy.status == 1 && busy.stderr.contains("a restore goes into an empty Ferry"), "\(busy)")
                }
            }
        }
    }

    /// A crafted backup's schema does not come along: its triggers (one that would write a hook
    /// into a session's options as the restore changes rows, one that would do it when the
    /// daemon journals an event) and views are gone; its rows come into tables the migrations make.
    @Test func aCraftedBackupsTriggersDoNotComeAlong() async throws {
        try await CommandRunner.withHome { home in
            _ = try await CommandRunner.ferry(["session", "set", "cli", "--header", "X-Kept: yes"], home: home)
            _ = try await CommandRunner.ferry(["stop"], home: home)
            let backup = home.appendingPathComponent("crafted.backup")
            #expect(try await CommandRunner.ferry(["backup", backup.path], home: home).status == 0)
            let hook = #"{"onComplete":"touch /tmp/ferry-pwned"}"#
            let queue = try DatabaseQueue(path: backup.path)
            try await queue.write { db in
                try db.execute(sql: "CREATE TRIGGER evil_update AFTER UPDATE ON transfer BEGIN UPDATE session SET options = '\(hook)'; END")
                try db.execute(sql: "CREATE TRIGGER evil_event AFTER INSERT ON event BEGIN UPDATE session SET options = '\(hook)'; END")
                try db.execute(sql: "CREATE VIEW evil_view AS SELECT * FROM session")
            }
            try queue.close()
            try await withTemporaryDirectory { other in
                let restored = try await CommandRunner.ferry(["restore", backup.path], home: other)
                #expect(restored.status == 0, "\(restored)")
                let journal = try DatabaseQueue(path: other.appendingPathComponent("state/journal.sqlite").path)
                let (names, options) = try await journal.read { db in
                    (try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'evil%'"),
                     try String.fetchAll(db, sql: "SELECT options FROM session WHERE options IS NOT NULL"))
                }
                try journal.close()
                #expect(names.isEmpty, "\(names)")
                #expect(options.count == 1 && options[0].contains("X-Kept") && !options[0].contains("onComplete"), "\(options)")
                _ = try await CommandRunner.ferry(["get", "--no-wait", "http://127.0.0.1:9/nothing"], home: other)
                let shown = try await CommandRunner.ferry(["session", "show", "cli"], home: other)
                #expect(shown.stdout.contains("X-Kept") && !shown.stdout.contains("touch"), "\(shown)")
                _ = try await CommandRunner.ferry(["stop"], home: other)
            }
        }
    }

    @Test func aBackupFromANewerFerryIsRefusedByName() async throws {
        try await CommandRunner.withHome { home in
            let backup = home.appendingPathComponent("future.backup")
            #expect(try await CommandRunner.ferry(["status"], home: home).status == 1)
            // A journal made by this Ferry (the daemon makes it at start), then a migration it does not know.
            _ = try await CommandRunner.ferry(["ls"], home: home)
            _ = try await CommandRunner.ferry(["stop"], home: home)
            #expect(try await CommandRunner.ferry(["backup", backup.path], home: home).status == 0)
            let queue = try DatabaseQueue(path: backup.path)
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: what a later Ferry keeps')")
                try db.execute(sql: "UPDATE ferryBackup SET value = ? WHERE key = 'migrations'", arguments: [#"["v99: what a later Ferry keeps"]"#])
                try db.execute(sql: "UPDATE ferryBackup SET value = '9.0.0' WHERE key = 'ferryVersion'")
            }
            try queue.close()
            try await withTemporaryDirectory { other in
                let refused = try await CommandRunner.ferry(["restore", backup.path], home: other)
                #expect(refused.status == 1, "\(refused)")
                #expect(refused.stderr.contains("written by Ferry 9.0.0, newer than this one") && refused.stderr.contains("v99: what a later Ferry keeps"), "\(refused)")
                #expect(!FileManager.default.fileExists(atPath: other.appendingPathComponent("state/journal.sqlite").path))
                let junk = other.appendingPathComponent("junk.backup")
                try Data("not a backup".utf8).write(to: junk)
                let notOne = try await CommandRunner.ferry(["restore", junk.path], home: other)
                #expect(notOne.status == 1 && notOne.stderr.contains("is not a Ferry backup"), "\(notOne)")
            }
        }
    }

    static func client(_ home: URL) throws -> DaemonClient {
        let daemon = try #require(CommandRunner.daemonInfo(home: home))
        let token = try String(contentsOf: home.appendingPathComponent("state/token"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return DaemonClient(baseURL: daemon.url, token: token)
    }

    static func transfers(_ output: CommandRunner.Output) throws -> [Transfer] {
        try FerryJSON.decoder().decode([Transfer].self, from: Data(output.stdout.utf8))
    }
}
