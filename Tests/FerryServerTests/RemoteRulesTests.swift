import FerryKit
@testable import FerryServer
import Testing

/// The rules of a listener beyond loopback, as a table: whose Host passes, whose forwarded
/// headers count, which Origin is the request's own.
@Suite struct RemoteRulesTests {
    let direct = RemoteRules(hosts: ["nas.local", "192.168.1.5", "fe80::1"], trustedProxies: [], proxied: false)
    let behindProxy = RemoteRules(hosts: ["ferry.example.org"], trustedProxies: [try! RemoteRules.range("10.0.0.0/8")], proxied: true)

    @Test(arguments: [
        ("nas.local", true), ("NAS.LOCAL:8443", true), ("nas.local.:8443", true), ("192.168.1.5:8443", true), ("[fe80::1]:8443", true),
        ("evil.example", false), ("nas.local.evil.example", false), ("192.168.1.6", false), ("", false), ("nas.local:x", false),
        ("[fe80::1]x", false), ("nas.local@evil.example", false), ("localhost", false),
    ])
    func aHostMustBeTheServers(host: String, passes: Bool) {
        let seen = try? direct.see(peer: "192.168.1.20", tls: true, host: host, forwardedFor: nil, forwardedProto: nil, forwardedHost: nil)
        #expect((seen != nil) == passes, "\(host)")
    }

    @Test func forwardedHeadersCountFromATrustedProxyAlone() throws {
        let seen = try behindProxy.see(
            peer: "10.0.0.2", tls: false, host: "10.0.0.9:8080", forwardedFor: "198.51.100.1, 203.0.113.7, 10.0.0.3", forwardedProto: "https",
            forwardedHost: "ferry.example.org"
        )
        #expect(seen == RemoteRules.Seen(client: "203.0.113.7", host: "ferry.example.org", secure: true), "the nearest address no proxy added")
        #expect(throws: FerryError.self) {
            _ = try behindProxy.see(peer: "192.168.1.20", tls: false, host: "ferry.example.org", forwardedFor: "10.0.0.2", forwardedProto: "https", forwardedHost: nil)
        }
        // On a direct listener, forwarded headers from a peer that is not a proxy change nothing.
        let spoofed = try direct.see(peer: "192.168.1.20", tls: true, host: "nas.local", forwardedFor: "127.0.0.1", forwardedProto: "http", forwardedHost: "evil.example")
        #expect(spoofed == RemoteRules.Seen(client: "192.168.1.20", host: "nas.local", secure: true))
    }

    @Test func theOriginMustBeTheRequestsOwn() throws {
        let seen = RemoteRules.Seen(client: "192.168.1.20", host: "nas.local:8443", secure: true)
        #expect(direct.sameOrigin("https://nas.local:8443", as: seen))
        #expect(direct.sameOrigin("HTTPS://NAS.LOCAL:8443", as: seen))
        for origin in ["http://nas.local:8443", "https://nas.local", "https://evil.example", "null", "https://nas.local:8443.evil.example"] {
            #expect(!direct.sameOrigin(origin, as: seen), "\(origin)")
        }
    }

    @Test(arguments: [
        ("10.0.0.0/8", "10.200.3.4", true), ("10.0.0.0/8", "11.0.0.1", false), ("192.168.1.7", "192.168.1.7", true), ("192.168.1.7", "192.168.1.8", false),
        ("172.16.0.0/12", "172.31.255.255", true), ("172.16.0.0/12", "172.32.0.0", false), ("::1", "::1", true), ("fd00::/8", "fd12::5", true),
        ("fd00::/8", "fe80::1", false), ("127.0.0.1", "::ffff:127.0.0.1", true), ("0.0.0.0/0", "8.8.8.8", true), ("10.0.0.0/8", "not an address", false),
    ])
    func rangesContainTheirAddresses(range: String, address: String, contains: Bool) throws {
        #expect(RemoteRules.range(try RemoteRules.range(range), contains: address) == contains)
    }

    @Test(arguments: ["", "10.0.0.0/33", "::/129", "nas.local", "10.0.0/8", "10.0.0.0/-1"])
    func badRangesAreRefused(text: String) {
        #expect(throws: FerryError.self) { _ = try RemoteRules.range(text) }
    }
}
