import FerryKit
import Foundation
@testable import FerryCore
import Testing

@Suite struct RedirectPolicyTests {
    static let https = URL(string: "https://example.com/a/b/file.mp3?x=1")!
    static let http = URL(string: "http://example.com/a/b/file.mp3")!

    /// Runs `next` and returns the error it throws, or nil.
    func refusal(
        _ policy: RedirectPolicy = RedirectPolicy(), location: String?, from current: URL = https, visited: [URL]? = nil
    ) -> FerryError? {
        do {
            _ = try policy.next(location: location, from: current, visited: visited ?? [current])
            return nil
        } catch {
            return error
        }
    }

    @Test func defaults() {
        let policy = RedirectPolicy()
        #expect(policy.maxHops == 10)
        #expect(policy.allowsDowngrade == false)
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func redirectStatuses(_ status: Int) {
        #expect(RedirectPolicy.isRedirect(status: status))
    }

    @Test(arguments: [200, 204, 206, 300, 304, 305, 306, 309, 400, 404, 416, 500, 503, 0, -301])
    func otherStatuses(_ status: Int) {
        #expect(!RedirectPolicy.isRedirect(status: status))
    }

    @Test(arguments: [
        ("https://cdn.example.net/f.mp3", "https://cdn.example.net/f.mp3"),
        ("/c/d.mp3", "https://example.com/c/d.mp3"),
        ("next.mp3", "https://example.com/a/b/next.mp3"),
        ("../up.mp3", "https://example.com/a/up.mp3"),
        ("./same-dir.mp3", "https://example.com/a/b/same-dir.mp3"),
        ("//other.org/x.mp3", "https://other.org/x.mp3"),  // scheme-relative keeps https
        ("?x=2", "https://example.com/a/b/file.mp3?x=2"),
        ("HTTPS://Upper.Example.com/Z", "HTTPS://Upper.Example.com/Z"),
        ("https://example.com:8443/port", "https://example.com:8443/port"),
        ("https://x.org/a b.mp3", "https://x.org/a%20b.mp3"),  // spaces are percent-encoded
    ])
    func followsRelativeAndAbsoluteLocations(_ location: String, _ expected: String) throws {
        let next = try RedirectPolicy().next(location: location, from: Self.https, visited: [Self.https])
        #expect(next.absoluteString == expected)
        #expect(next.host != nil)
    }

    @Test func relativeLocationResolvesAgainstTheCurrentHopNotTheFirst() throws {
        let first = URL(string: "https://first.example/one/file")!
        let current = URL(string: "https://second.example/two/three/file")!
        let next = try RedirectPolicy().next(location: "../final.mp3", from: current, visited: [first, current])
        #expect(next.absoluteString == "https://second.example/two/final.mp3")
    }

    @Test(arguments: [nil, ""] as [String?])
    func refusesMissingLocation(_ location: String?) {
        let error = refusal(location: location)
        #expect(error?.code == .redirectRefused)
        #expect(error?.message.contains("without a Location header") == true)
    }

    @Test(arguments: [" https://leading-space.example/", "https://bad host.example/", "http://[::1/unclosed"])
    func refusesInvalidLocations(_ location: String) {
        let error = refusal(location: location)
        #expect(error?.code == .redirectRefused)
        #expect(error?.message.contains("invalid URL") == true)
    }

    @Test(arguments: [
        "file:///etc/passwd",
        "FILE:///etc/passwd",
        "ftp://ftp.example.com/file.mp3",
        "javascript:alert(1)",
        "data:text/plain,hello",
        "mailto:someone@example.com",
        "ws://example.com/socket",
        "gopher://example.com/",
        "http:///no-host",
        "https:///no-host",
        "https://",
        "https:",
    ])
    func refusesNonHTTPOrHostlessTargets(_ location: String) {
        for policy in [RedirectPolicy(), RedirectPolicy(maxHops: 100, allowsDowngrade: true)] {
            for current in [Self.https, Self.http] {
                let error = refusal(policy, location: location, from: current)
                #expect(error?.code == .redirectRefused, "\(location) from \(current)")
                #expect(error?.message.contains("only http and https") == true)
            }
        }
    }

    @Test(arguments: ["http://example.com/plain.mp3", "HTTP://example.com/plain.mp3", "http://other.example/x"])
    func refusesHTTPSToHTTPDowngrade(_ location: String) throws {
        let error = refusal(location: location, from: Self.https)
        #expect(error?.code == .redirectRefused)
        #expect(error?.message.contains("downgrade") == true)

        let upper = URL(string: "HTTPS://example.com/a")!
        #expect(refusal(location: location, from: upper)?.code == .redirectRefused)

        let allowed = try RedirectPolicy(allowsDowngrade: true).next(
            location: location, from: Self.https, visited: [Self.https]
        )
        #expect(allowed.absoluteString == location)
    }

    @Test func schemeRelativeLocationKeepsTheScheme() throws {
        // `//host/path` keeps the current scheme, so from https it stays https.
        let next = try RedirectPolicy().next(location: "//cdn.example/x", from: Self.https, visited: [Self.https])
        #expect(next.scheme == "https")
        // From http it stays http, which is no downgrade.
        let plain = try RedirectPolicy().next(location: "//cdn.example/x", from: Self.http, visited: [Self.http])
        #expect(plain.absoluteString == "http://cdn.example/x")
    }

    @Test(arguments: [
        ("http://example.com/a", "http://example.com/b"),
        ("http://example.com/a", "https://example.com/b"),  // an upgrade
        ("https://example.com/a", "https://example.com/b"),
    ])
    func followsWithoutDowngrade(_ current: String, _ location: String) throws {
        let from = URL(string: current)!
        let next = try RedirectPolicy().next(location: location, from: from, visited: [from])
        #expect(next.absoluteString == location)
    }

    @Test func refusesRedirectToItself() {
        let error = refusal(location: Self.https.absoluteString)
        #expect(error?.code == .tooManyRedirects)
        #expect(error?.message.contains("loop") == true)
    }

    @Test func refusesRelativeRedirectToItself() {
        #expect(refusal(location: "file.mp3?x=1")?.code == .tooManyRedirects)
    }

    @Test func refusesLoopBackToAnEarlierHop() {
        let a = URL(string: "https://a.example/1")!
        let b = URL(string: "https://b.example/2")!
        let c = URL(string: "https://c.example/3")!
        let error = refusal(location: "https://a.example/1", from: c, visited: [a, b, c])
        #expect(error?.code == .tooManyRedirects)
        #expect(refusal(location: "https://b.example/2", from: c, visited: [a, b, c])?.code == .tooManyRedirects)
        #expect(refusal(location: "https://d.example/4", from: c, visited: [a, b, c]) == nil)
    }

    /// Follows a chain of distinct redirects the way HTTPFetcher does; returns how many were
    /// followed and the error that stopped the chain.
    func followChain(_ policy: RedirectPolicy, length: Int) -> (followed: Int, error: FerryError?) {
        var current = URL(string: "https://example.com/0")!
        var visited = [current]
        for hop in 1...length {
            do {
                let next = try policy.next(location: "/\(hop)", from: current, visited: visited)
                #expect(next.absoluteString == "https://example.com/\(hop)")
                visited.append(next)
                current = next
            } catch {
                return (hop - 1, error)
            }
        }
        return (length, nil)
    }

    @Test(arguments: [0, 1, 3, 10])
    func followsExactlyMaxHops(_ maxHops: Int) {
        let policy = RedirectPolicy(maxHops: maxHops)
        let (followed, error) = followChain(policy, length: maxHops + 5)
        #expect(followed == maxHops)
        #expect(error?.code == .tooManyRedirects)
        #expect(error?.message.contains("More than \(maxHops) redirects starting at https://example.com/0") == true)

        // A chain of exactly maxHops redirects goes through.
        if maxHops > 0 {
            let (all, none) = followChain(policy, length: maxHops)
            #expect(all == maxHops)
            #expect(none == nil)
        }
    }

    @Test func defaultPolicyFollowsTenRedirects() {
        let (followed, error) = followChain(RedirectPolicy(), length: 20)
        #expect(followed == 10)
        #expect(error?.code == .tooManyRedirects)
    }
}
