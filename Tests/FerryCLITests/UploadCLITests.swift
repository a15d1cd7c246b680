#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// `ferry put` and `ferry session` with the real binary: an upload that survives `kill -9` of the
/// daemon and continues from the server's offset, and credentials that reach the server but
/// never listings or the daemon's log.
@Suite(.serialized) struct UploadCLITests {
    @Test func killNineMidUploadThenContinueFromTheServersOffset() async throws {
        let data = Origin.bytes(3_000_000, seed: 9)
        try await UploadReceiver.run { receiver, base in
            try await CommandRunner.withHome { home in
                let file = home.appendingPathComponent("show.mp3")
                try data.write(to: file)
                let put = try await CommandRunner.ferry(
                    ["put", "--no-wait", "--json", "--limit-rate", "500k", file.path, base.appendingPathComponent("tus").absoluteString],
                    home: home
                )
                #expect(put.status == 0, "\(put)")
                let id = try FerryJSON.decoder().decode([Transfer].self, from: Data(put.stdout.utf8))[0].id

                try await eventually("a third of the file at the server", timeout: .seconds(60)) { receiver.bytesReceived >= 1_000_000 }
                let victim = try #require(CommandRunner.daemonInfo(home: home))
                #expect(kill(victim.pid, SIGKILL) == 0)
                try await eventually("the daemon to die") { !ChildProcess.isAlive(victim.pid) }

                // The next command starts a new daemon, which continues the upload by itself.
                let wait = try await CommandRunner.ferry(["wait", "--json", String(id)], home: home)
                #expect(wait.status == 0, "\(wait)")
                let done = try FerryJSON.decoder().decode([Transfer].self, from: Data(wait.stdout.utf8))[0]
                #expect(done.kind == .upload)
                #expect(done.sha256 == Origin.sha256(data))
                #expect(receiver.completed.count == 1, "the server has the file once")
                #expect(receiver.completed.first?.body == data)
                #expect(receiver.bytesReceived == data.count, "no byte sent twice")
                #expect(receiver.requests.filter { $0.method == "POST" }.count == 1, "one upload resource, created once")
            }
        }
    }

    @Test func credentialsReachTheServerButNeverListingsOrTheLog() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(1000)))
            try await CommandRunner.withHome { home in
                let set = try await CommandRunner.ferry(
                    ["session", "set", "cli", "--header", "Authorization: Bearer s3cret-1", "--max-concurrent", "2"], home: home
                )
                #expect(set.status == 0, "\(set)")
                #expect(set.stdout.contains("Authorization: <redacted>"))
                #expect(set.stdout.contains("max concurrent  2"))

                let get = try await CommandRunner.ferry(
                    ["get", "--json", "--header", "Cookie: s3cret-2", base.appendingPathComponent("f").absoluteString], home: home
                )
                #expect(get.status == 0, "\(get)")
                let seen = try #require(origin.requests(for: "/f").first).headers
                #expect(seen["authorization"] == "Bearer s3cret-1")
                #expect(seen["cookie"] == "s3cret-2")

                let list = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
                let show = try await CommandRunner.ferry(["session", "show", "cli", "--json"], home: home)
                let shown = try FerryJSON.decoder().decode(SessionConfiguration.self, from: Data(show.stdout.utf8))
                #expect(shown.options.headers == ["Authorization": "<redacted>"])
                #expect(shown.options.maxConcurrent == 2)
                let log = String(decoding: FileManager.default.contents(atPath: home.appendingPathComponent("state/daemon.log").path) ?? Data(), as: UTF8.self)
                #expect(!log.isEmpty)
                for output in [set.stdout, get.stdout, list.stdout, show.stdout, log] {
                    #expect(!output.contains("s3cret"))
                }
            }
        }
    }

    @Test func badOptionsAndFilesGiveOneClearLine() async throws {
        try await CommandRunner.withHome { home in
            let rate = try await CommandRunner.ferry(["get", "--limit-rate", "fast", "http://127.0.0.1:9/x"], home: home)
            #expect(rate.status != 0)
            #expect(rate.stderr.contains("'fast' is not a rate"))
            let when = try await CommandRunner.ferry(["get", "--at", "tomorrow", "http://127.0.0.1:9/x"], home: home)
            #expect(when.stderr.contains("'tomorrow' is not a time"))
            let missing = try await CommandRunner.ferry(["put", home.appendingPathComponent("nope.mp3").path, "http://127.0.0.1:9/x"], home: home)
            #expect(missing.status == 1)
            #expect(missing.stderr.hasPrefix("ferry: "))
            #expect(missing.stderr.contains("nope.mp3"))
            let connections = try await CommandRunner.ferry(["get", "-x", "0", "http://127.0.0.1:9/x"], home: home)
            #expect(connections.status != 0)
            #expect(connections.stderr.contains("--connections takes 1 to 64 (it was 0)"), "\(connections.stderr)")
            let header = try await CommandRunner.ferry(["session", "set", "cli", "--header", "no colon"], home: home)
            #expect(header.status != 0)
            #expect(header.stderr.contains("'no colon' is not a header"))
        }
    }
}
