import FerryKit
@testable import FerryServer
import FerryTestSupport
import Foundation
import NIOCore
import Testing

/// The web app's way in: one-time login links, the session cookie, the library's files with
/// Range, every session's events, and the headers that keep the page to itself.
@Suite struct WebAccessTests {
    static func cookie(from headers: [(String, String)]) -> String? {
        headers.first { $0.0.lowercased() == "set-cookie" }.map { String($0.1.split(separator: ";")[0]) }
    }

    @Test func aLoginLinkWorksOnceAndSetsAStrictHttpOnlyCookie() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let link = try await d.client.loginLink()
                #expect(link.url.hasPrefix("\(d.baseURL)/login?code="))
                let path = String(link.url.dropFirst(d.baseURL.count))
                let first = try await d.raw(.GET, path, authorized: false)
                #expect(first.status == 303)
                #expect(first.headers.first(name: "Location") == "/")
                let setCookie = try #require(first.headers.first(name: "Set-Cookie"))
                #expect(setCookie.contains("HttpOnly"))
                #expect(setCookie.contains("SameSite=Strict"))
                let cookie = String(setCookie.split(separator: ";")[0])

                // The cookie opens the API; a tampered one does not.
                let withCookie = try await d.raw(.GET, "/v1/status", headers: [("Cookie", cookie)], authorized: false)
                #expect(withCookie.status == 200)
                let tampered = cookie.dropLast() + (cookie.last == "0" ? "1" : "0")
                let bad = try await d.raw(.GET, "/v1/status", headers: [("Cookie", String(tampered))], authorized: false)
                #expect(bad.status == 401)
                let expired = try await d.raw(.GET, "/v1/status", headers: [("Cookie", "ferry_session=v1.1000.00")], authorized: false)
                #expect(expired.status == 401)

                // The link is single-use.
                let second = try await d.raw(.GET, path, authorized: false)
                #expect(second.status == 401)
                #expect(second.body.contains("ferry open"))
                let made = try await d.raw(.POST, "/v1/login-links", authorized: false)
                #expect(made.status == 401, "a login link needs the token")
            }
        }
    }

    @Test func theWebAppIsServedWithItsProtectiveHeaders() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let page = try await d.raw(.GET, "/", authorized: false)
                #expect(page.status == 200)
                #expect(page.body.lowercased().contains("<!doctype html>"))
                let policy = try #require(page.headers.first(name: "Content-Security-Policy"))
                #expect(policy.contains("script-src 'self'"))
                #expect(!policy.contains("unsafe-inline"))
                #expect(page.headers.first(name: "X-Content-Type-Options") == "nosniff")
                #expect(page.headers.first(name: "X-Frame-Options") == "DENY")
                let foreign = try await d.raw(.GET, "/", headers: [("Host", "evil.example")], authorized: false)
                #expect(foreign.status == 403)
            }
        }
    }

    /// The service worker at the root (its scope: the whole app) and the list of what it keeps offline.
    @Test func theServiceWorkerAndItsShellListAreServed() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let worker = try await d.raw(.GET, "/sw.js", authorized: false)
                #expect(worker.status == 200 && worker.headers.first(name: "Content-Type") == "text/javascript; charset=utf-8")
                let shell = try await d.raw(.GET, "/shell.json", authorized: false)
                #expect(shell.status == 200 && shell.headers.first(name: "Content-Type") == "application/json")
                struct Listing: Decodable { var version: String, files: [String] }
                let listing = try JSONDecoder().decode(Listing.self, from: Data(shell.body.utf8))
                #expect(listing.version.count == 16)
                #expect(["/index.html", "/js/app.js", "/css/base.css", "/i18n/ru.json", "/manifest.webmanifest"].allSatisfy(listing.files.contains))
                #expect(!listing.files.contains("/sw.js") && !listing.files.contains("/shell.json"))
            }
        }
    }

    @Test func theShellVersionChangesWithAnyFile() {
        let one = WebAppMiddleware(files: ["index.html": Data("a".utf8), "js/app.js": Data("b".utf8)])
        let same = WebAppMiddleware(files: ["index.html": Data("a".utf8), "js/app.js": Data("b".utf8)])
        let changed = WebAppMiddleware(files: ["index.html": Data("a".utf8), "js/app.js": Data("c".utf8)])
        let body = { (middleware: WebAppMiddleware) in String(buffer: middleware.files["/shell.json"]!.body) }
        #expect(body(one) == body(same))
        #expect(body(one) != body(changed))
    }

    @Test func finishedFilesAreServedWithRanges() async throws {
        let file = Origin.File(data: Origin.bytes(100_000), contentType: "audio/mpeg")
        try await Origin.run { origin, base in
            origin.serve("/song.mp3", file)
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let id = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("song.mp3").absoluteString])).transfers[0].id
                    let early = try await d.raw(.GET, "/v1/transfers/\(id)/file")
                    #expect(early.status == 409 || early.status == 200)
                    try await eventually("completed") { try await d.client.transfer(id).state == .completed }

                    let whole = try await d.raw(.GET, "/v1/transfers/\(id)/file")
                    #expect(whole.status == 200)
                    #expect(whole.headers.first(name: "Content-Type") == "audio/mpeg")
                    #expect(whole.headers.first(name: "Accept-Ranges") == "bytes")
                    #expect(whole.headers.first(name: "Content-Length") == "100000")

                    let part = try await d.raw(.GET, "/v1/transfers/\(id)/file", headers: [("Range", "bytes=1000-1999")])
                    #expect(part.status == 206)
                    #expect(part.headers.first(name: "Content-Range") == "bytes 1000-1999/100000")
                    #expect(part.headers.first(name: "Content-Length") == "1000")
                    let tail = try await d.raw(.GET, "/v1/transfers/\(id)/file", headers: [("Range", "bytes=-10")])
                    #expect(tail.headers.first(name: "Content-Range") == "bytes 99990-99999/100000")
                    let beyond = try await d.raw(.GET, "/v1/transfers/\(id)/file", headers: [("Range", "bytes=200000-")])
                    #expect(beyond.status == 416)
                    let attachment = try await d.raw(.GET, "/v1/transfers/\(id)/file?download=1")
                    #expect(attachment.headers.first(name: "Content-Disposition")?.hasPrefix("attachment") == true)
                    // Without a login, no file.
                    #expect(try await d.raw(.GET, "/v1/transfers/\(id)/file", authorized: false).status == 401)
                }
            }
        }
    }

    @Test func everySessionsEventsInOneStream() async throws {
        try await Origin.run { origin, base in
            origin.serve("/a", .init(data: Origin.bytes(1000)))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let start = try await d.client.status().lastEventSeq
                    _ = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("a").absoluteString], session: "one"))
                    _ = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("a").absoluteString], session: "two"))
                    let events = try await d.collectEvents(session: nil, after: start) { events in
                        Set(events.filter { $0.kind == .completed }.map(\.session)) == ["one", "two"]
                    }
                    #expect(Set(events.map(\.session)) == ["one", "two"])
                    #expect(events.filter { $0.kind == .created }.count == 2)
                }
            }
        }
    }
}
