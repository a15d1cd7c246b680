#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

/// `ferry doctor` with the real binary and no daemon running: each thing the issue names is
/// found, and `--fix` mends it or says why not.
@Suite(.serialized) struct DoctorCLITests {
    @Test func aJournalTruncatedInTheMiddleIsRecoveredWithWhatCouldBeRead() async throws {
        try await Origin.run { origin, base in
            let count = 300
            for n in 1...count + 1 { origin.serve("/f\(n)", .init(data: Data("file \(n)\n".utf8))) }
            try await CommandRunner.withHome { home in
                let list = home.appendingPathComponent("urls.txt")
                try (1...count).map { base.appendingPathComponent("f\($0)").absoluteString }.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
                let get = try await CommandRunner.ferry(["get", "-i", list.path], home: home)
                #expect(get.status == 0, "\(get)")
                #expect(try await CommandRunner.ferry(["stop"], home: home).status == 0)
                let journal = home.appendingPathComponent("state/journal.sqlite")
                let size = try #require(try FileManager.default.attributesOfItem(atPath: journal.path)[.size] as? Int)
                #expect(!FileManager.default.fileExists(atPath: journal.path + "-wal"), "a clean stop leaves everything in the file")
                #expect(truncate(journal.path, off_t(size * 6 / 10)) == 0)

                let found = try await CommandRunner.ferry(["doctor", "--json"], home: home)
                #expect(found.status == 1, "\(found)")
                let check = try #require(try Self.report(found).checks.first { $0.name == "journal" })
                #expect(check.status == .problem && check.details.contains { $0.contains("malformed") }, "\(check)")
                let refused = try await CommandRunner.ferry(["ls"], home: home)
                #expect(refused.status != 0 && refused.stderr.contains("ferry doctor --fix"), "the daemon says what to do: \(refused)")

                // What the failed start left is what is kept aside (SQLite may have rounded it up to a page).
                let damaged = try Data(contentsOf: journal)
                let fixed = try await CommandRunner.ferry(["doctor", "--fix", "--json"], home: home)
                #expect(fixed.status == 0, "\(fixed)")
                let mended = try #require(try Self.report(fixed).checks.first { $0.name == "journal" })
                #expect(mended.status == .warning && mended.mended.count == 2, "\(mended)")
                let aside = try #require(try FileManager.default.contentsOfDirectory(atPath: home.appendingPathComponent("state").path).first { $0.hasPrefix("journal-damaged-") && $0.hasSuffix(".sqlite") })
                #expect(try Data(contentsOf: home.appendingPathComponent("state/\(aside)")) == damaged, "the damaged journal is kept as it was")
                #expect(damaged.count < size, "\(damaged.count) of \(size) bytes")

                let ls = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
                #expect(ls.status == 0, "\(ls)")
                let kept = try FerryJSON.decoder().decode([Transfer].self, from: Data(ls.stdout.utf8))
                #expect(kept.count > 0 && kept.count < count, "some transfers kept, those on lost pages not: \(kept.count)")
                #expect(mended.mended[1].contains("transfer \(kept.count)"), "the report says what was kept: \(mended.mended)")
                #expect(kept.allSatisfy { $0.state == .completed && $0.url.hasPrefix(base.absoluteString) })
                // Ids are never given twice: a new transfer comes after every id the journal ever gave.
                let again = try await CommandRunner.ferry(["get", base.appendingPathComponent("f\(count + 1)").absoluteString], home: home)
                #expect(again.status == 0, "\(again)")
                let all = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
                let newest = try FerryJSON.decoder().decode([Transfer].self, from: Data(all.stdout.utf8)).map(\.id).max() ?? 0
                #expect(newest > Int64(count), "\(all)")
                #expect(try Self.report(try await CommandRunner.ferry(["doctor", "--json"], home: home)).checks.first { $0.name == "journal" }?.status == .ok)
                _ = try await CommandRunner.ferry(["stop"], home: home)
            }
        }
    }

    @Test func anOrphanPartFileAnEpisodesFileWithoutItsRecordAndAnOpenSecretAreMended() async throws {
        try await Origin.run { origin, base in
            let feed = TestFeed(
                title: "Night Shift",
                items: [1, 2].map {
                    TestFeed.Item(guid: "g\($0)", title: "Part \($0)", published: "Fri, 0\($0) Mar 2024 06:00:00 GMT",
                                  enclosure: base.appendingPathComponent("media/ep\($0).mp3").absoluteString)
                }
            )
            origin.serve("/night.xml", .init(data: feed.data))
            try await CommandRunner.withHome { home in
                let add = try await CommandRunner.ferry(["podcast", "add", base.appendingPathComponent("night.xml").absoluteString], home: home)
                #expect(add.status == 0, "\(add)")
                #expect(try await CommandRunner.ferry(["stop"], home: home).status == 0)
                let library = home.appendingPathComponent("library")
                let orphan = library.appendingPathComponent(".partial/4242.part")
                try FileManager.default.createDirectory(at: orphan.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(count: 5000).write(to: orphan)
                // Part 2's file, put back from a copy after its record was lost.
                let episodeFile = library.appendingPathComponent("Podcasts/Night Shift/2024-03-02 Part 2.mp3")
                try Data("mp3".utf8).write(to: episodeFile)
                let stranger = library.appendingPathComponent("Podcasts/Night Shift/notes.txt")
                try Data("mine".utf8).write(to: stranger)
                let token = home.appendingPathComponent("state/token")
                #expect(chmod(token.path, 0o644) == 0)

                let found = try await CommandRunner.ferry(["doctor", "--json"], home: home)
                #expect(found.status == 1, "\(found)")
                let report = try Self.report(found)
                let parts = try #require(report.checks.first { $0.name == "partFiles" })
                #expect(parts.status == .problem && parts.details == ["\(orphan.path): no transfer 4242 (4.9 KiB)"], "\(parts)")
                let files = try #require(report.checks.first { $0.name == "libraryFiles" })
                #expect(files.status == .warning && files.details.count == 2, "\(files)")
                #expect(files.details.contains { $0.hasPrefix(episodeFile.path) } && files.details.contains { $0.hasPrefix(stranger.path) })
                let permissions = try #require(report.checks.first { $0.name == "permissions" })
                #expect(permissions.status == .problem && permissions.details == ["\(token.path) has mode 644: readable by other users"], "\(permissions)")
                #expect(report.checks.map(\.name) == ["journal", "partFiles", "libraryFiles", "listeners", "permissions", "disk", "service"])
                let human = try await CommandRunner.ferry(["doctor"], home: home)
                #expect(human.stdout.contains("PROBLEM  Part files") && human.stdout.contains("`ferry doctor --fix` mends what is safe to mend."), "\(human)")

                let fixed = try await CommandRunner.ferry(["doctor", "--fix", "--json"], home: home)
                #expect(fixed.status == 0, "\(fixed)")
                let after = try Self.report(fixed)
                #expect(!FileManager.default.fileExists(atPath: orphan.path))
                #expect(after.checks.first { $0.name == "partFiles" }?.mended == ["deleted 1 part file no transfer owned (4.9 KiB)"])
                var info = stat()
                #expect(stat(token.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
                let given = try #require(after.checks.first { $0.name == "libraryFiles" })
                #expect(given.mended == ["\(episodeFile.path) given back to its episode of Night Shift"], "\(given)")
                #expect(given.details == ["\(stranger.path): no episode of Night Shift is named so"], "the rest is kept and explained")
                #expect(FileManager.default.fileExists(atPath: stranger.path))

                let episodes = try await CommandRunner.ferry(["podcast", "episodes", "night", "--json"], home: home)
                let list = try FerryJSON.decoder().decode([Episode].self, from: Data(episodes.stdout.utf8))
                #expect(list.first { $0.title == "Part 2" }?.state == .downloaded, "\(episodes)")
                #expect(list.first { $0.title == "Part 1" }?.state != .downloaded)
                _ = try await CommandRunner.ferry(["stop"], home: home)
            }
        }
    }

    @Test func aTakenPortIsNamedWithTheProgramHoldingIt() async throws {
        try await CommandRunner.withHome { home in
            let socket = try ListeningSocket.bind(host: "127.0.0.1", port: 0)
            let port = try #require(socket.port)
            try FileManager.default.createDirectory(at: home.appendingPathComponent("state"), withIntermediateDirectories: true)
            try Data(#"{"listen": "127.0.0.1:\#(port)"}"#.utf8).write(to: home.appendingPathComponent("state/sync.json"))
            let found = try await CommandRunner.ferry(["doctor", "--json"], home: home)
            #expect(found.status == 1, "\(found)")
            let check = try #require(try Self.report(found).checks.first { $0.name == "listeners" })
            #expect(check.status == .problem, "\(check)")
            #expect(check.details.contains { $0.hasPrefix("sync API 127.0.0.1:\(port): taken by ") && $0.hasSuffix("(pid \(getpid()))") }, "\(check)")
            let fixed = try await CommandRunner.ferry(["doctor", "--fix", "--json"], home: home)
            #expect(fixed.status == 1, "a port is not Ferry's to free: \(fixed)")
            #expect(try Self.report(fixed).checks.first { $0.name == "listeners" }?.advice?.contains("another port") == true)
            withExtendedLifetime(socket) {}
        }
    }

    @Test func aServiceWhoseProgramIsGoneIsAProblem() async throws {
        try await CommandRunner.withHome { home in
            let units = home.appendingPathComponent("units")
            try FileManager.default.createDirectory(at: units, withIntermediateDirectories: true)
            let environment = ["FERRY_SYSTEMD_UNIT_DIR": units.path]
            let none = try await CommandRunner.ferry(["doctor", "--json"], home: home, extraEnvironment: environment)
            #expect(try Self.report(none).checks.first { $0.name == "service" }?.status == .ok)
            try "[Service]\nExecStart=\"/opt/gone/ferry\" serve --no-hooks\n".write(to: units.appendingPathComponent("ferry.service"), atomically: true, encoding: .utf8)
            let found = try await CommandRunner.ferry(["doctor", "--json"], home: home, extraEnvironment: environment)
            #expect(found.status == 1, "\(found)")
            let check = try #require(try Self.report(found).checks.first { $0.name == "service" })
            #expect(check.status == .problem && check.details.first == "\(units.path)/ferry.service runs /opt/gone/ferry, which is gone", "\(check)")
            #expect(check.advice?.contains("ferry service install") == true)
        }
    }

    static func report(_ output: CommandRunner.Output) throws -> DoctorReport {
        try FerryJSON.decoder().decode(DoctorReport.self, from: Data(output.stdout.utf8))
    }
}
