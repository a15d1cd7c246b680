import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Servers that want a login, with the real `ferry` binary against the test origin: a form POST
/// that sets a cookie and redirects, then a file that needs it; cookies set along a GET's
/// redirect chain; a browser's cookies.txt loaded; the jar listed (values redacted), exported and
/// cleared; a malformed cookies.txt refused before anything is queued.
@Suite(.serialized) struct CookiesCLITests {
    @Test func logInThenDownload() async throws {
        try await Origin.run { origin, base in
            let file = Origin.File(data: Origin.bytes(40_000, seed: 7))
            origin.serve("/members/report.pdf", file)
            origin.requireCookie("/members/report.pdf", "sid=s3cr3t-77")
            origin.serve("/welcome", .init(data: Data("welcome".utf8)))
            origin.redirect("/login", to: "/welcome", status: 303)
            origin.setCookies("/login", ["sid=s3cr3t-77; Path=/; HttpOnly; SameSite=Lax"])
            let fileURL = base.appendingPathComponent("members/report.pdf").absoluteString
            try await CommandRunner.withHome { home in
                func ferry(_ arguments: [String], input: String? = nil) async throws -> CommandRunner.Output {
                    try await CommandRunner.ferry(arguments, home: home, input: input)
                }
                let refused = try await ferry(["get", "--session", "site", fileURL])
                #expect(refused.status != 0, "without the cookie: 403")

                let login = try await ferry(
                    ["session", "cookies", "login", "site", base.appendingPathComponent("login").absoluteString,
                     "--form", "user=ann", "--password-field", "password", "--password-stdin", "--json"],
                    input: "hunter two & more\n"
                )
                #expect(login.status == 0, "\(login)")
                let posted = try #require(origin.requests(for: "/login").last)
                #expect(posted.method == "POST" && posted.body == "user=ann&password=hunter+two+%26+more", "\(String(describing: posted.body))")
                #expect(origin.requests(for: "/welcome").last?.method == "GET", "a 303 is followed with a GET")
                #expect(!login.stdout.contains("s3cr3t-77") && login.stdout.contains("<redacted>"), "\(login.stdout)")

                let again = try await ferry(["get", "--session", "site", "--force", fileURL])
                #expect(again.status == 0, "\(again)")
                let done = try Self.transfers(try await ferry(["ls", "--all", "--json"])).first { $0.state == .completed }
                #expect(done?.sha256 == file.sha256)

                let listed = try await ferry(["session", "cookies", "ls", "site"])
                #expect(listed.stdout.contains("sid=<redacted>") && !listed.stdout.contains("s3cr3t"), "\(listed)")
                let exported = home.appendingPathComponent("jar.txt")
                #expect(try await ferry(["session", "cookies", "export", "site", exported.path]).status == 0)
                let text = try String(contentsOf: exported, encoding: .utf8)
                #expect(text.contains("\tsid\ts3cr3t-77") && text.contains("#HttpOnly_127.0.0.1"), "\(text)")
                let mode = try FileManager.default.attributesOfItem(atPath: exported.path)[.posixPermissions] as? Int
                #expect(mode == 0o600)
                let cleared = try await ferry(["session", "cookies", "clear", "site"])
                #expect(cleared.stdout.contains("Cleared 1 cookies"), "\(cleared)")
                #expect(try await ferry(["get", "--session", "site", "--force", fileURL]).status != 0, "the jar is empty again")
                _ = try await ferry(["stop"])
            }
        }
    }

    @Test func cookiesSetAlongARedirectChainAndFromACookiesFile() async throws {
        try await Origin.run { origin, base in
            let file = Origin.File(data: Origin.bytes(30_000, seed: 8))
            origin.serve("/dl/file.iso", file)
            origin.requireCookie("/dl/file.iso", "ticket=abc")
            origin.redirect("/get", to: "/dl/file.iso")
            origin.setCookies("/get", ["ticket=abc; Path=/dl"])
            origin.serve("/private/notes.txt", .init(data: Data("notes".utf8)))
            origin.requireCookie("/private/notes.txt", "browser=yes")
            try await CommandRunner.withHome { home in
                let chain = try await CommandRunner.ferry(["get", base.appendingPathComponent("get").absoluteString], home: home)
                #expect(chain.status == 0, "the cookie set by the redirect reaches the file: \(chain)")
                #expect(origin.requests(for: "/dl/file.iso").last?.headers["cookie"] == "ticket=abc")

                let cookies = home.appendingPathComponent("cookies.txt")
                try "# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/private\tFALSE\t0\tbrowser\tyes\n".write(to: cookies, atomically: true, encoding: .utf8)
                let loaded = try await CommandRunner.ferry(
                    ["get", "--session", "browser", "--load-cookies", cookies.path, base.appendingPathComponent("private/notes.txt").absoluteString], home: home
                )
                #expect(loaded.status == 0, "\(loaded)")

                let before = try Self.transfers(try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)).count
                let bad = home.appendingPathComponent("bad.txt")
                try "127.0.0.1\tFALSE\t/\tFALSE\tnever\tx\ty\n".write(to: bad, atomically: true, encoding: .utf8)
                let refused = try await CommandRunner.ferry(["get", "--load-cookies", bad.path, base.appendingPathComponent("get").absoluteString], home: home)
                #expect(refused.status != 0 && refused.stderr.contains("Line 1 of the cookies file") && refused.stderr.contains("seconds since 1970"), "\(refused)")
                #expect(try Self.transfers(try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)).count == before, "nothing queued")
                _ = try await CommandRunner.ferry(["stop"], home: home)
            }
        }
    }

    static func transfers(_ output: CommandRunner.Output) throws -> [Transfer] {
        try FerryJSON.decoder().decode([Transfer].self, from: Data(output.stdout.utf8))
    }
}
