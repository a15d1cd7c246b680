import AsyncHTTPClient
import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Proxy URLs and the environment's variables, read as curl reads them.
@Suite struct ProxySettingsTests {
    @Test func proxyURLsParseWithTheirCredentialsKeptSecret() throws {
        let http = try ProxyURL(parsing: "http://ann:p%40ss@proxy.example:8080")
        #expect(http.kind == .http && http.host == "proxy.example" && http.port == 8080)
        #expect(http.user == "ann" && http.password == "p@ss")
        #expect(http.redacted == "http://ann:<redacted>@proxy.example:8080")
        #expect(try ProxyURL(parsing: "proxy.example:3129") == ProxyURL(parsing: "http://proxy.example:3129"))
        #expect(try ProxyURL(parsing: "http://proxy.example").port == 3128)
        let socks = try ProxyURL(parsing: "socks5h://[::1]")
        #expect(socks.kind == .socks5 && socks.host == "::1" && socks.port == 1080)
        #expect(socks.redacted == "socks5h://[::1]:1080")
        #expect(try ProxyURL(parsing: "socks5://10.0.0.1:9050").kind == .socks5)
    }

    static let badProxies: [(String, String)] = [
        ("ftp://proxy:21", "uses ftp://, which Ferry does not speak"),
        ("socks4://proxy:1080", "uses socks4://"),
        ("https://proxy:443", "uses https://"),
        ("http://", "names no host"),
        ("http://proxy:3128/path", "has a path or query"),
        ("socks5://ann:secret@proxy:1080", "cannot send a user name and password to a SOCKS5 proxy"),
        ("http://proxy:99999", "has no valid port"),
    ]

    @Test(arguments: badProxies)
    func aProxyFerryCannotUseIsAClearError(_ text: String, _ message: String) {
        do {
            _ = try ProxyURL(parsing: text)
            Issue.record("\(text) parsed")
        } catch {
            #expect(error.code == .invalidRequest)
            #expect(error.message.contains(message), "\(error.message)")
            #expect(!error.message.contains("secret"), "the password is never repeated")
        }
    }

    @Test func theEnvironmentPicksAProxyPerSchemeLikeCurl() throws {
        let environment = try ProxyEnvironment(environment: [
            "http_proxy": "http://web:3128", "HTTP_PROXY": "http://ignored:1", "HTTPS_PROXY": "http://secure:3128",
            "all_proxy": "socks5h://socks:1080", "no_proxy": "localhost, .internal.example,10.0.0.0/8, fd00::/8, files.example:8443, 192.168.1.5",
        ])
        #expect(environment.proxy(for: URL(string: "http://example.com/a")!)?.host == "web")
        #expect(environment.proxy(for: URL(string: "https://example.com/a")!)?.host == "secure")
        let onlyAll = try ProxyEnvironment(environment: ["ALL_PROXY": "socks5h://socks:1080"])
        #expect(onlyAll.proxy(for: URL(string: "https://example.com/a")!)?.kind == .socks5)
        for direct in [
            "http://localhost/x", "https://internal.example/x", "https://a.b.internal.example/x", "http://10.1.2.3/x", "http://[fd00::1]/x",
            "https://files.example:8443/x", "http://192.168.1.5/x",
        ] {
            #expect(environment.proxy(for: URL(string: direct)!) == nil, "\(direct) bypasses the proxy")
        }
        for proxied in ["http://notinternal.example/x", "https://files.example/x", "http://11.1.2.3/x", "http://192.168.1.50/x", "http://[fe80::1]/x"] {
            #expect(environment.proxy(for: URL(string: proxied)!) != nil, "\(proxied) goes through the proxy")
        }
        #expect(try ProxyEnvironment(environment: ["http_proxy": "http://p:1", "no_proxy": "*"]).proxy(for: URL(string: "http://a/")!) == nil)
        let logged = try ProxyEnvironment(environment: ["https_proxy": "http://ann:hunter2@p:1", "no_proxy": "localhost"]).description
        #expect(logged == "https: http://ann:<redacted>@p:1, no_proxy: localhost")
    }

    @Test func aBadProxyVariableNamesItself() {
        #expect(throws: FerryError.self) { try ProxyEnvironment(environment: ["https_proxy": "gopher://x:70"]) }
        do {
            _ = try ProxyEnvironment(environment: ["HTTPS_PROXY": "gopher://ann:hunter2@x:70"])
        } catch {
            #expect(error.message.hasPrefix("https_proxy: "))
            #expect(!error.message.contains("hunter2"))
        }
    }

    /// A transfer's or session's option decides over the environment: a proxy, or none.
    @Test func optionsDecideOverTheEnvironment() async throws {
        try await withTestHTTPClient { http in
            let clients = HTTPClients(direct: http, environment: try ProxyEnvironment(environment: ["http_proxy": "http://env:3128"]))
            let url = URL(string: "http://example.com/f")!
            #expect(clients.proxy(for: url)?.host == "env")
            #expect(clients.proxy(for: url, options: TransferOptions(proxy: "socks5h://mine:1080"))?.host == "mine")
            #expect(clients.proxy(for: url, options: TransferOptions(noProxy: true)) == nil)
            let merged = TransferOptions(proxy: "http://session:1").overridden(by: TransferOptions(noProxy: true))
            #expect(merged.proxy == nil && merged.noProxy == true)
            #expect(clients.client(for: url, options: TransferOptions(noProxy: true)) === http)
            #expect(clients.client(for: url) === clients.client(for: url), "one client per proxy")
            #expect(clients.client(for: url) !== http)
            // The daemon's own options (session '*') decide for requests of no transfer.
            clients.setDaemonOptions(TransferOptions(noProxy: true))
            #expect(clients.proxy(for: url) == nil)
            clients.setDaemonOptions(TransferOptions(proxy: "socks5h://daemon:1080"))
            #expect(clients.proxy(for: url)?.host == "daemon")
            #expect(clients.proxy(for: url, options: TransferOptions())?.host == "env", "a transfer's merged options already hold the daemon's")
            await clients.shutdownProxied()
        }
    }

    @Test func optionsShowAProxysPasswordRedactedAndRefuseBothProxyAndNone() throws {
        let options = TransferOptions(proxy: "http://ann:hunter2@proxy:3128")
        #expect(options.redacted.proxy == "http://ann:<redacted>@proxy:3128")
        #expect(throws: FerryError.self) { try TransferOptions(proxy: "http://p:1", noProxy: true).validate() }
        #expect(throws: FerryError.self) { try TransferOptions(proxy: "ftp://p:1").validate() }
        let cleared = try TransferOptionsUpdate(clear: ["noProxy"]).applied(to: options)
        #expect(cleared.proxy == nil && cleared.noProxy == nil)
    }
}

/// Downloads through real proxies on loopback: tinyproxy (HTTP, Basic authentication) and dante
/// (SOCKS5). Each is skipped, saying why, when its Debian package is missing.
@Suite(.serialized) struct ProxyDownloadTests {
    static var fastWaits: TransferEngine.Configuration {
        var configuration = TransferEngine.Configuration.fast
        configuration.retry = RetryPolicy(baseDelay: .milliseconds(100), maxDelay: .milliseconds(400))
        return configuration
    }

    static func session(_ h: EngineHarness, proxy: String) async throws {
        _ = try await h.engine.updateOptions(session: "test", TransferOptionsUpdate(set: TransferOptions(proxy: proxy)))
    }

    @Test(.enabled(if: ProxyProcess.program(.http) != nil, "tinyproxy is not installed (Debian: tinyproxy)"))
    func throughAnHTTPProxyWithCredentialsAndWaitingWhileItIsDown() async throws {
        let file = Origin.File(data: Origin.bytes(1_500_000, seed: 9), etag: "\"p1\"")
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.holdAfter(400_000, gate)])
            try await withTemporaryDirectory { home in
                let proxy = try await ProxyProcess(.http, folder: home.appendingPathComponent("proxy"), connectPorts: [base.port!])
                try await EngineHarness.run(home: home, configuration: Self.fastWaits) { h in
                    try await Self.session(h, proxy: proxy.url())
                    let t = try await h.get(base.appendingPathComponent("f"))
                    try await h.wait(t.id, bytes: 400_000)
                    #expect(proxy.logText.contains("CONNECT"), "the request went through the proxy")
                    // The proxy dies mid-download: the transfer waits, saying so...
                    await proxy.kill()
                    gate.open()
                    let waiting = try await h.wait(t.id, for: .waiting, timeout: .seconds(20))
                    #expect(waiting.waitReason?.contains("the proxy 127.0.0.1") == true, "\(waiting.waitReason ?? "")")
                    // ...and continues from the bytes on disk once it is back.
                    try await proxy.restart()
                    let done = try await h.wait(t.id, for: .completed, timeout: .seconds(30))
                    #expect(done.sha256 == file.sha256)
                    let ranges = origin.requests(for: "/f").compactMap(\.range)
                    #expect(ranges.count >= 1 && ranges.allSatisfy { $0 != "bytes=0-" }, "\(ranges)")
                    // The password is nowhere to be read back.
                    let shown = try await h.engine.options(session: "test").redacted
                    #expect(shown.proxy == "http://ann:<redacted>@127.0.0.1:\(proxy.port)")
                    #expect(try await h.engine.transfer(t.id).options == nil)
                    let events = try await h.events()
                    #expect(!String(decoding: try FerryJSON.encoder().encode(events), as: UTF8.self).contains(ProxyProcess.password))
                }
            }
        }
    }

    @Test(.enabled(if: ProxyProcess.program(.http) != nil, "tinyproxy is not installed (Debian: tinyproxy)"))
    func aMissingOrWrongProxyPasswordWaitsSayingSo() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Origin.File(data: Origin.bytes(10_000)))
            try await withTemporaryDirectory { home in
                let proxy = try await ProxyProcess(.http, folder: home.appendingPathComponent("proxy"), connectPorts: [base.port!])
                try await EngineHarness.run(home: home, configuration: Self.fastWaits) { h in
                    try await Self.session(h, proxy: proxy.url(password: nil))
                    let t = try await h.get(base.appendingPathComponent("f"))
                    let missing = try await h.wait(t.id, for: .waiting)
                    #expect(missing.waitReason == "the proxy needs a user name and password")
                    _ = try await h.engine.pause(t.id)
                    try await Self.session(h, proxy: proxy.url(password: "wrong"))
                    _ = try await h.engine.resume(t.id)
                    try await eventually("a second refusal") { try await h.engine.transfer(t.id).attempts >= 2 }
                    let wrong = try await h.wait(t.id, for: .waiting)
                    #expect(wrong.waitReason == "the proxy refused the connection (check its user name and password)")
                    #expect(origin.requests(for: "/f").isEmpty, "nothing reached the server")
                    #expect(wrong.bytesReceived == 0)
                }
            }
        }
    }

    @Test(.enabled(if: ProxyProcess.program(.socks5) != nil, "dante-server is not installed (Debian: dante-server)"))
    func throughASOCKS5Proxy() async throws {
        let file = Origin.File(data: Origin.bytes(300_000, seed: 11))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                let proxy = try await ProxyProcess(.socks5, folder: home.appendingPathComponent("proxy"))
                try await EngineHarness.run(home: home, configuration: Self.fastWaits) { h in
                    try await Self.session(h, proxy: proxy.url())
                    let t = try await h.get(base.appendingPathComponent("f"))
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(proxy.logText.contains("pass"), "dante logged the connection: \(proxy.logText.suffix(300))")
                }
            }
        }
    }
}
