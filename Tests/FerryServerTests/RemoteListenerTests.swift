import AsyncHTTPClient
import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

/// A listener beyond loopback (`--listen`), here on 127.0.0.1 so the tests need no network:
/// HTTPS with Ferry's CA or the user's certificate, and everything it must refuse.
@Suite struct RemoteListenerTests {
    @Test func ferrysOwnCAServesHTTPSAndTheRulesHold() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home, configure: { $0.remote = RemoteSettings(listen: ["127.0.0.1:0"]) }) { d in
                let url = try await Self.url(d)
                let caPath = home.appendingPathComponent("state/tls/ca.pem").path
                let keyMode = try FileManager.default.attributesOfItem(atPath: home.appendingPathComponent("state/tls/ca-key.pem").path)[.posixPermissions] as? Int
                #expect(keyMode == 0o600)
                try await withTestHTTPClient(trusting: caPath) { https in
                    let page = try await Self.send(https, .GET, url + "/")
                    #expect(page.status == 200 && page.body.contains("<html"), "the web app")
                    #expect(page.headers.first(name: "Strict-Transport-Security") == "max-age=31536000")
                    let ca = try await Self.send(https, .GET, url + "/ca.pem")
                    let pem = try String(contentsOfFile: caPath, encoding: .utf8)
                    #expect(ca.status == 200 && ca.body == pem)

                    // Only accounts count here: not the daemon's token, not the login link.
                    let token = try await Self.send(https, .GET, url + "/v1/status", headers: [("Authorization", "Bearer \(d.daemon.token)")])
                    #expect(token.status == 403 && token.body.contains("this machine only"), "\(token)")
                    let link = try await d.client.loginLink()
                    let code = String(link.url.split(separator: "?").last ?? "")
                    let viaLink = try await Self.send(https, .GET, url + "/login?" + code)
                    #expect(viaLink.status == 403 && viaLink.headers.first(name: "Set-Cookie") == nil, "\(viaLink)")

                    try await d.client.addUser("alice", password: "alice's password")
                    let login = #"{"name": "alice", "password": "alice's password"}"#
                    let json = ("Content-Type", "application/json")
                    let crossSite = try await Self.send(https, .POST, url + "/v1/session", headers: [json, ("Origin", "https://evil.example")], body: login)
                    #expect(crossSite.status == 403 && crossSite.body.contains("forbidden_origin"), "\(crossSite)")
                    let fromExtension = try await Self.send(https, .GET, url + "/v1/status", headers: [("Origin", "chrome-extension://abc")])
                    #expect(fromExtension.status == 403)
                    let loggedIn = try await Self.send(https, .POST, url + "/v1/session", headers: [json, ("Origin", url)], body: login)
                    let cookie = try #require(loggedIn.headers.first(name: "Set-Cookie"), "\(loggedIn)")
                    #expect(cookie.contains("Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
                    let me = try await Self.send(https, .GET, url + "/v1/me", headers: [("Cookie", String(cookie.split(separator: ";")[0]))])
                    #expect(me.status == 200 && me.body.contains("alice"), "\(me)")

                    // DNS rebinding: a page whose name resolves here sends its own Host.
                    let rebound = try await Self.send(https, .GET, url + "/v1/me", headers: [("Host", "evil.example")])
                    #expect(rebound.status == 403 && rebound.body.contains("forbidden_host"), "\(rebound)")
                }
                // Plain HTTP to the TLS port: a clear answer, then the connection closes.
                try await withTestHTTPClient { plain in
                    let answer = try await Self.send(plain, .GET, url.replacingOccurrences(of: "https://", with: "http://") + "/v1/status")
                    #expect(answer.status == 400 && answer.body.contains("This port speaks HTTPS only: open \(url)/"), "\(answer)")
                }
                // A client that does not trust Ferry's CA is refused by its own TLS.
                try await withTestHTTPClient { untrusting in
                    _ = await #expect(throws: (any Error).self) { _ = try await Self.send(untrusting, .GET, url + "/") }
                }
                let status = try await d.client.remoteStatus()
                #expect(status.urls == [url] && status.caURL == url + "/ca.pem")
                #expect(status.caFingerprint == CertificateSource.fingerprint(ofPEMFile: caPath))
            }
        }
    }

    /// The user's certificate, replaced on disk while the daemon runs: the next handshake
    /// presents the new one; a key that is not the certificate's is not used.
    @Test func aRenewedCertificateIsPresentedAtTheNextHandshake() async throws {
        try await withTemporaryDirectory { home in
            let certificate = home.appendingPathComponent("cert.pem").path, key = home.appendingPathComponent("key.pem").path
            try Self.makeCertificate(certificate: certificate, key: key, name: "first")
            let settings = RemoteSettings(listen: ["127.0.0.1:0"], certificate: certificate, privateKey: key, serverNames: ["localhost"])
            try await DaemonHarness.run(home: home, configure: { $0.remote = settings }) { d in
                let url = try await Self.url(d)
                let first = try Self.presented(url)
                #expect(first == CertificateSource.fingerprint(ofPEMFile: certificate))

                // A new certificate whose key is not in place yet: still the first.
                let next = home.appendingPathComponent("next")
                try FileManager.default.createDirectory(at: next, withIntermediateDirectories: true)
                try Self.makeCertificate(certificate: next.appendingPathComponent("cert.pem").path, key: next.appendingPathComponent("key.pem").path, name: "second")
                #expect(rename(next.appendingPathComponent("cert.pem").path, certificate) == 0)
                #expect(try Self.presented(url) == first, "a certificate without its key is not used")
                #expect(rename(next.appendingPathComponent("key.pem").path, key) == 0)
                let second = try Self.presented(url)
                #expect(second != first && second == CertificateSource.fingerprint(ofPEMFile: certificate))
                #expect(try await d.client.remoteStatus().certificateFingerprint == second)
            }
        }
    }

    /// A plain listener for a reverse proxy: the proxy's X-Forwarded-* count, from it alone.
    @Test func aProxiedListenerTrustsItsProxyAlone() async throws {
        try await withTemporaryDirectory { home in
            let settings = RemoteSettings(listen: ["http://127.0.0.1:0"], serverNames: ["ferry.example.org"], trustedProxies: ["127.0.0.1"])
            try await DaemonHarness.run(home: home, configure: { $0.remote = settings }) { d in
                let url = try await Self.url(d)
                try await d.client.addUser("alice", password: "alice's password")
                try await withTestHTTPClient { http in
                    let forwarded = [("X-Forwarded-For", "203.0.113.7, 127.0.0.1"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "ferry.example.org")]
                    let login = try await Self.send(
                        http, .POST, url + "/v1/session", headers: forwarded + [("Content-Type", "application/json"), ("Origin", "https://ferry.example.org")],
                        body: #"{"name": "alice", "password": "alice's password"}"#
                    )
                    #expect(login.status == 204 && login.headers.first(name: "Set-Cookie")?.contains("Secure") == true, "\(login)")
                    #expect(try await d.client.userSessions("alice").credentials.first?.address == "203.0.113.7", "the client's address, not the proxy's")
                    let wrongHost = try await Self.send(http, .GET, url + "/v1/me", headers: [("X-Forwarded-Host", "evil.example")])
                    #expect(wrongHost.status == 403)
                }
            }
            let untrusted = RemoteSettings(listen: ["http://127.0.0.1:0"], trustedProxies: ["10.9.9.9"])
            try await DaemonHarness.run(home: home, configure: { $0.remote = untrusted }) { d in
                let url = try await Self.url(d)
                try await withTestHTTPClient { http in
                    let direct = try await Self.send(http, .GET, url + "/v1/me", headers: [("X-Forwarded-For", "10.9.9.9")])
                    #expect(direct.status == 403 && direct.body.contains("reverse proxy alone"), "\(direct)")
                }
            }
        }
    }

    /// A phone's podcast app (gpodder.net API, HTTP Basic) and aria2's clients (`/jsonrpc`
    /// with the secret) reach the server where the web app is; only the sync paths ever ask a
    /// browser for Basic credentials.
    @Test func syncAndAria2AnswerOnTheSameListener() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home, configure: {
                $0.remote = RemoteSettings(listen: ["127.0.0.1:0"])
                $0.aria2 = Aria2Listener(port: 0)
            }) { d in
                let url = try await Self.url(d)
                try await d.client.addUser("alice", password: "alice's password")
                try await withTestHTTPClient(trusting: home.appendingPathComponent("state/tls/ca.pem").path) { https in
                    let basic = "Basic " + Data("alice:alice's password".utf8).base64EncodedString()
                    let login = try await Self.send(https, .POST, url + "/api/2/auth/alice/login.json", headers: [("Authorization", basic)])
                    #expect(login.status == 200 && login.headers.first(name: "Set-Cookie")?.contains("sessionid=") == true, "\(login)")
                    let devices = try await Self.send(https, .GET, url + "/api/2/devices/alice.json", headers: [("Authorization", basic)])
                    #expect(devices.status == 200 && devices.body.hasPrefix("["), "\(devices)")
                    let anonymous = try await Self.send(https, .GET, url + "/api/2/devices/alice.json")
                    #expect(anonymous.status == 401 && anonymous.headers.first(name: "WWW-Authenticate") == #"Basic realm="Ferry sync""#)
                    let simple = try await Self.send(https, .GET, url + "/subscriptions/alice.opml")
                    #expect(simple.status == 401 && simple.headers.first(name: "WWW-Authenticate") != nil)
                    let api = try await Self.send(https, .GET, url + "/v1/me")
                    #expect(api.status == 401 && api.headers.first(name: "WWW-Authenticate") == nil, "no browser prompt for the web app")

                    let secret = try String(contentsOf: d.paths.aria2Secret, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                    let call = #"{"jsonrpc": "2.0", "id": "1", "method": "aria2.getVersion", "params": ["token:\#(secret)"]}"#
                    let version = try await Self.send(https, .POST, url + "/jsonrpc", headers: [("Content-Type", "application/json")], body: call)
                    #expect(version.status == 200 && version.body.contains("\"version\""), "\(version)")
                    let wrong = #"{"jsonrpc": "2.0", "id": "1", "method": "aria2.getVersion", "params": ["token:nope"]}"#
                    let refused = try await Self.send(https, .POST, url + "/jsonrpc", headers: [("Content-Type", "application/json")], body: wrong)
                    #expect(refused.body.contains("Unauthorized"), "\(refused)")
                }
            }
        }
    }

    @Test func badSettingsAreRefusedBeforeAnythingListens() async throws {
        let cases: [(RemoteSettings, String)] = [
            (RemoteSettings(listen: ["http://0.0.0.0:8080"]), "--trusted-proxy"),
            (RemoteSettings(listen: ["nowhere:80"]), "--listen takes"),
            (RemoteSettings(listen: ["0.0.0.0:99999"]), "--listen takes"),
            (RemoteSettings(listen: ["0.0.0.0:0"], certificate: "/nonexistent.pem"), "go together"),
            (RemoteSettings(listen: ["0.0.0.0:0"], certificate: "/nonexistent.pem", privateKey: "/nonexistent.key"), "Could not read the certificate"),
            (RemoteSettings(listen: ["0.0.0.0:0"], serverNames: ["bad name"]), "--server-name"),
            (RemoteSettings(listen: ["http://127.0.0.1:0"], trustedProxies: ["10.0.0.0/99"]), "prefix length"),
        ]
        for (settings, message) in cases {
            try await withTemporaryDirectory { home in
                let error = #expect(throws: FerryError.self) { _ = try RemoteListeners(settings: settings, state: home, logger: testLogger("remote")) }
                #expect(error?.message.contains(message) == true, "\(settings): \(error?.message ?? "")")
            }
        }
    }

    // MARK: Helpers

    /// The listener's URL once it is bound.
    static func url(_ d: DaemonHarness) async throws -> String {
        var status = d.daemon.remote?.status()
        try await eventually("the listener is bound") {
            status = d.daemon.remote?.status()
            return status?.urls.isEmpty == false
        }
        return status!.urls[0]
    }

    static func send(
        _ client: HTTPClient, _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: String? = nil
    ) async throws -> (status: Int, body: String, headers: HTTPHeaders) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 8 << 20)), response.headers)
    }

    /// A self-signed certificate for 127.0.0.1 and localhost, made by openssl.
    static func makeCertificate(certificate: String, key: String, name: String) throws {
        let result = try ChildProcess.capture("/usr/bin/openssl", arguments: [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", certificate,
            "-days", "30", "-subj", "/CN=\(name)", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        guard result.status == 0 else { throw TestFailure("openssl req: \(result.error)") }
    }

    /// The SHA-256 fingerprint of the certificate a new TLS connection is shown (openssl s_client).
    static func presented(_ url: String) throws -> String {
        let address = String(url.dropFirst("https://".count))
        let result = try ChildProcess.capture("/bin/sh", arguments: [
            "-c", "openssl s_client -connect '\(address)' -servername localhost </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256",
        ])
        guard result.status == 0, let value = result.output.split(separator: "=", maxSplits: 1).last else {
            throw TestFailure("openssl s_client: \(result.output) \(result.error)")
        }
        return value.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
