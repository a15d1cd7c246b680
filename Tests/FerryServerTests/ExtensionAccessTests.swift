import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryServer

/// The browser extension's way in: a one-time pairing code for a token of its own, which may
/// create and read transfers and nothing else, only from the origin it paired from, until
/// `ferry extension revoke`.
@Suite struct ExtensionAccessTests {
    static let origin = "chrome-extension://abcdefghijklmnopabcdefghijklmnop"

    /// Pairs through the API as the extension does, from `origin`. - Returns: its token.
    static func pair(_ d: DaemonHarness, origin: String? = Self.origin) async throws -> String {
        let code = try await d.client.extensionPairingCode()
        #expect(code.expiresInSeconds == 300)
        #expect(code.daemonURL == d.baseURL)
        var headers = [("Content-Type", "application/json")]
        if let origin { headers.append(("Origin", origin)) }
        let response = try await d.raw(.POST, "/v1/extension/pair", headers: headers, authorized: false, body: #"{"code":"\#(code.code)"}"#)
        #expect(response.status == 201, "\(response.body)")
        return try FerryJSON.decoder().decode(ExtensionToken.self, from: Data(response.body.utf8)).token
    }

    static func asExtension(_ token: String, origin: String? = Self.origin, json: Bool = false) -> [(String, String)] {
        var headers = [("Authorization", "Bearer \(token)")]
        if let origin { headers.append(("Origin", origin)) }
        if json { headers.append(("Content-Type", "application/json")) }
        return headers
    }

    @Test func aCodeWorksOnceAndTheTokenIsKeptOnlyAsADigest() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                #expect(try await d.client.extensionStatus() == ExtensionStatus(paired: false))
                let code = try await d.client.extensionPairingCode().code
                let body = #"{"code":"\#(code)"}"#
                let headers = [("Origin", Self.origin), ("Content-Type", "application/json")]
                let wrong = try await d.raw(.POST, "/v1/extension/pair", headers: headers, authorized: false, body: #"{"code":"0123456789abcdef0123456789abcdef"}"#)
                #expect(wrong.status == 401)
                #expect(wrong.body.contains("ferry extension pair"))
                let first = try await d.raw(.POST, "/v1/extension/pair", headers: headers, authorized: false, body: body)
                #expect(first.status == 201)
                let token = try FerryJSON.decoder().decode(ExtensionToken.self, from: Data(first.body.utf8)).token
                #expect(token.count == 64)
                let again = try await d.raw(.POST, "/v1/extension/pair", headers: headers, authorized: false, body: body)
                #expect(again.status == 401, "a code works once")

                let status = try await d.client.extensionStatus()
                #expect(status.paired && status.origin == Self.origin && status.pairedAt != nil)
                let file = d.paths.extensionPairing
                let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
                #expect((attributes[.posixPermissions] as? Int) == 0o600)
                let stored = try String(contentsOf: file, encoding: .utf8)
                #expect(!stored.contains(token))
                #expect(stored.contains(ExtensionPairing.digest(token)))

                // A web page cannot pair (a foreign Origin), nor can the web app's login or the
                // extension make codes.
                let page = try await d.raw(.POST, "/v1/extension/pair", headers: [("Origin", "https://evil.example"), ("Content-Type", "application/json")], authorized: false, body: body)
                #expect(page.status == 403)
                let cookie = try await d.webCookie()
                let fromWeb = try await d.raw(.POST, "/v1/extension/pairing-codes", headers: [("Cookie", cookie)], authorized: false)
                #expect(fromWeb.status == 403)
                let fromExtension = try await d.raw(.POST, "/v1/extension/pairing-codes", headers: Self.asExtension(token), authorized: false)
                #expect(fromExtension.status == 403)
            }
        }
    }

    @Test func theTokenCreatesAndReadsTransfersWithTheirCookieRedacted() async throws {
        let file = Origin.File(data: Origin.bytes(50_000), contentType: "application/zip")
        try await Origin.run { origin, base in
            origin.serve("/private.zip", file)
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let token = try await Self.pair(d)
                    let url = base.appendingPathComponent("private.zip").absoluteString
                    let body = #"{"urls":["\#(url)"],"session":"browser","options":{"headers":{"Cookie":"sid=s3cr3t-cookie","Referer":"http://127.0.0.1/page","User-Agent":"Mozilla/5.0 test"}}}"#
                    let created = try await d.raw(.POST, "/v1/transfers", headers: Self.asExtension(token, json: true), authorized: false, body: body)
                    #expect(created.status == 201, "\(created.body)")
                    #expect(!created.body.contains("s3cr3t-cookie"))
                    let id = try FerryJSON.decoder().decode(TransferList.self, from: Data(created.body.utf8)).transfers[0].id
                    try await eventually("completed") { try await d.client.transfer(id).state == .completed }
                    let seen = try #require(origin.requests(for: "/private.zip").first)
                    #expect(seen.headers["cookie"] == "sid=s3cr3t-cookie")
                    #expect(seen.headers["referer"] == "http://127.0.0.1/page")
                    #expect(seen.headers["user-agent"] == "Mozilla/5.0 test")

                    for path in ["/v1/transfers", "/v1/transfers?state=all&order=desc&limit=20", "/v1/transfers/\(id)", "/v1/status"] {
                        let read = try await d.raw(.GET, path, headers: Self.asExtension(token), authorized: false)
                        #expect(read.status == 200, "\(path)")
                        #expect(!read.body.contains("s3cr3t-cookie"), "\(path)")
                    }
                    let listed = try await d.raw(.GET, "/v1/transfers/\(id)", headers: Self.asExtension(token), authorized: false)
                    #expect(listed.body.contains("<redacted>"))
                    let events = try await d.collectEvents(session: "browser", after: 0) { events in events.contains { $0.kind == .completed } }
                    let eventText = String(decoding: try FerryJSON.encoder().encode(events), as: UTF8.self)
                    #expect(!eventText.contains("s3cr3t-cookie"))
                }
            }
        }
    }

    @Test(arguments: [
        ("GET", "/v1/config"), ("PATCH", "/v1/config"), ("PATCH", "/v1/sessions/browser/config"), ("GET", "/v1/sessions/browser/config"),
        ("GET", "/v1/podcasts"), ("POST", "/v1/shutdown"), ("POST", "/v1/login-links"), ("GET", "/v1/events"),
        ("GET", "/v1/sessions/browser/events"), ("GET", "/v1/sync/users"), ("GET", "/v1/transfers/1/file"), ("POST", "/v1/transfers/1/cancel"),
        ("POST", "/v1/transfers/1/pause"), ("DELETE", "/v1/transfers/1"), ("PATCH", "/v1/transfers/1"), ("POST", "/v1/transfers/pause-all"),
        ("DELETE", "/v1/transfers?finished=true"), ("GET", "/v1/transfers/1/resume-data"), ("POST", "/v1/uploads"), ("GET", "/v1/extension"),
        ("DELETE", "/v1/extension"), ("GET", "/v1/catalog/search?term=x"), ("GET", "/v1/openapi.yaml"),
    ])
    func everythingElseIsRefused(method: String, path: String) async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let token = try await Self.pair(d)
                let body = #"{"set":{"onComplete":"touch /tmp/pwned"}}"#
                let response = try await d.raw(.init(rawValue: method), path, headers: Self.asExtension(token, json: true), authorized: false, body: method == "GET" || method == "DELETE" ? nil : body)
                #expect(response.status == 403, "\(method) \(path): \(response.body)")
                let error = try FerryJSON.decoder().decode(ErrorResponse.self, from: Data(response.body.utf8))
                #expect(error.error.code == "forbidden")
                #expect(error.error.message.contains("only create and read transfers"))
                #expect(try await d.client.extensionStatus().paired, "nothing it sent revoked or changed anything")
            }
        }
    }

    @Test(arguments: [
        #""directory":"/tmp""#, #""overwrite":true"#, #""createDirectory":true"#, #""options":{"directory":"/tmp"}"#,
        #""options":{"onComplete":"touch /tmp/pwned"}"#,
    ])
    func itsTransfersGoWhereTheUsersDownloadsGo(field: String) async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let token = try await Self.pair(d)
                let body = #"{"urls":["http://127.0.0.1:9/x.zip"],\#(field)}"#
                let response = try await d.raw(.POST, "/v1/transfers", headers: Self.asExtension(token, json: true), authorized: false, body: body)
                #expect(response.status == 403, "\(field): \(response.body)")
                #expect(try await d.client.transfers().transfers.isEmpty)
            }
        }
    }

    @Test func anExtensionsOriginNeedsTheExtensionsOwnToken() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let create = #"{"urls":["http://127.0.0.1:9/x.zip"]}"#
                // Before pairing: no token is the extension's.
                let unpaired = try await d.raw(.GET, "/v1/status", headers: [("Origin", Self.origin)], authorized: false)
                #expect(unpaired.status == 401)
                let token = try await Self.pair(d)
                // The daemon's own token or the web app's cookie from an extension: refused, reads too
                // (an extension with host permissions is not held back by CORS).
                let withDaemonToken = try await d.raw(.GET, "/v1/transfers", headers: [("Origin", Self.origin)])
                #expect(withDaemonToken.status == 403)
                #expect(withDaemonToken.body.contains("forbidden_origin"))
                let cookie = try await d.webCookie()
                let withCookie = try await d.raw(.POST, "/v1/transfers", headers: [("Origin", Self.origin), ("Cookie", cookie), ("Content-Type", "application/json")], authorized: false, body: create)
                #expect(withCookie.status == 403)
                // Another extension with this token: refused.
                let other = try await d.raw(.GET, "/v1/status", headers: Self.asExtension(token, origin: "chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba"), authorized: false)
                #expect(other.status == 403)
                // Outside the API, an extension origin changes nothing.
                let logout = try await d.raw(.POST, "/logout", headers: [("Origin", Self.origin)], authorized: false)
                #expect(logout.status == 403)
                // A web page with the token still may not change state (it could only have stolen it).
                let page = try await d.raw(.POST, "/v1/transfers", headers: Self.asExtension(token, origin: "https://evil.example", json: true), authorized: false, body: create)
                #expect(page.status == 403)
                // Without an Origin (a program, not a browser), the token works as it does from the extension.
                let plain = try await d.raw(.POST, "/v1/transfers", headers: Self.asExtension(token, origin: nil, json: true), authorized: false, body: create)
                #expect(plain.status == 201)
                let own = try await d.raw(.POST, "/v1/transfers", headers: Self.asExtension(token, json: true), authorized: false, body: create)
                #expect(own.status == 201)
                #expect(try await d.client.transfers().transfers.count == 1, "the same URL again is the same transfer")
            }
        }
    }

    @Test func revokingEndsTheTokenAndPairingAgainReplacesIt() async throws {
        try await withTemporaryDirectory { home in
            let token = try await DaemonHarness.run(home: home) { d in try await Self.pair(d) }
            // The pairing outlives the daemon.
            try await DaemonHarness.run(home: home) { d in
                let before = try await d.raw(.GET, "/v1/status", headers: Self.asExtension(token), authorized: false)
                #expect(before.status == 200)
                let revoked = try await d.client.revokeExtension()
                #expect(revoked.paired && revoked.origin == Self.origin)
                let after = try await d.raw(.GET, "/v1/status", headers: Self.asExtension(token), authorized: false)
                #expect(after.status == 401)
                #expect(!FileManager.default.fileExists(atPath: d.paths.extensionPairing.path))
                #expect(try await d.client.extensionStatus() == ExtensionStatus(paired: false))
                #expect(try await d.client.revokeExtension().paired == false)
                // Unused codes die with a revocation too.
                let code = try await d.client.extensionPairingCode().code
                _ = try await d.client.revokeExtension()
                let stale = try await d.raw(.POST, "/v1/extension/pair", headers: [("Content-Type", "application/json")], authorized: false, body: #"{"code":"\#(code)"}"#)
                #expect(stale.status == 401)

                let first = try await Self.pair(d)
                let second = try await Self.pair(d, origin: nil)
                let old = try await d.raw(.GET, "/v1/status", headers: Self.asExtension(first), authorized: false)
                #expect(old.status == 401, "pairing again replaces the earlier token")
                let new = try await d.raw(.GET, "/v1/status", headers: Self.asExtension(second), authorized: false)
                #expect(new.status == 200, "paired without an origin: any extension origin may carry it")
            }
        }
    }

    @Test func theRulesAsAFunction() {
        #expect(ExtensionAccess.allows(.get, path: "/v1/transfers"))
        #expect(ExtensionAccess.allows(.post, path: "/v1/transfers"))
        #expect(ExtensionAccess.allows(.get, path: "/v1/transfers/42"))
        #expect(ExtensionAccess.allows(.get, path: "/v1/status"))
        #expect(!ExtensionAccess.allows(.get, path: "/v1/transfers/42/file"))
        #expect(!ExtensionAccess.allows(.get, path: "/v1/transfers/0"))
        #expect(!ExtensionAccess.allows(.get, path: "/v1/transfers/pause-all"))
        #expect(!ExtensionAccess.allows(.post, path: "/v1/transfers/42"))
        #expect(!ExtensionAccess.allows(.get, path: "/v1/transfers/"))
        #expect(!ExtensionAccess.allows(.get, path: "/v2/transfers"))
        #expect(!ExtensionAccess.allows(.get, path: "/v1//transfers"))
        #expect(ExtensionAccess.isExtensionOrigin("chrome-extension://abc"))
        #expect(ExtensionAccess.isExtensionOrigin("moz-extension://abc"))
        #expect(!ExtensionAccess.isExtensionOrigin("https://chrome-extension.example"))
        #expect(!ExtensionAccess.isExtensionOrigin("null"))
    }
}
