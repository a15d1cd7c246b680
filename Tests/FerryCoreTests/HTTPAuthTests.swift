import AsyncHTTPClient
import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Servers that ask who the user is, through the real engine against the test origin: Basic and
/// Digest answered, sent at once on later requests, and never to another origin or over plain
/// http from the store. The origin's log of every request's Authorization proves each rule.
@Suite struct HTTPAuthTests {
    static let file = Origin.File(data: Origin.bytes(300_000))

    static func get(_ h: EngineHarness, _ url: URL, _ options: TransferOptions) async throws -> Transfer {
        try await h.engine.enqueue(.init(urls: [url], session: "test", options: options))[0]
    }

    /// The transfer once it ended, expected failed (a completed one fails the test at once).
    static func failure(_ h: EngineHarness, _ id: Int64) async throws -> Transfer {
        try await eventually("transfer \(id) to end") { try await h.engine.transfer(id).state.isFinal }
        let ended = try await h.engine.transfer(id)
        #expect(ended.state == .failed)
        return ended
    }

    @Test(arguments: [OriginLogin.Scheme.basic, .digestMD5, .digestSHA256])
    func answersTheChallengeWithUser(_ scheme: OriginLogin.Scheme) async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Self.file)
            origin.protect("/f", OriginLogin([scheme], user: "ann", password: "s3cret pass"))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), TransferOptions(connections: 1, user: "ann", password: "s3cret pass"))
                    #expect(try await h.wait(t.id, for: .completed).sha256 == Self.file.sha256)
                    let seen = origin.requests(for: "/f")
                    #expect(seen.first?.authorization == nil)
                    #expect(seen.last?.authorization?.hasPrefix(scheme == .basic ? "Basic " : "Digest ") == true)
                    if scheme == .digestSHA256 { #expect(seen.last?.authorization?.contains("algorithm=SHA-256") == true) }
                    // Shown options keep the user, not the password.
                    let shown = try await h.engine.transfer(t.id)
                    #expect(shown.options?.password == "<redacted>")
                    let events = try await h.events()
                    #expect(!String(describing: events).contains("s3cret"))
                }
            }
        }
    }

    /// Offered all three, Ferry answers the strongest.
    @Test func picksTheStrongest() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Self.file)
            origin.protect("/f", OriginLogin([.basic, .digestMD5, .digestSHA256], user: "ann", password: "pw"))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), TransferOptions(user: "ann", password: "pw"))
                    try await h.wait(t.id, for: .completed)
                    #expect(origin.requests(for: "/f").last?.authorization?.contains("algorithm=SHA-256") == true)
                }
            }
        }
    }

    /// After the first 401, every range of a segmented download carries Digest at once, with
    /// the same nonce and a growing nc: one challenge in all.
    @Test func segmentedDownloadSendsAuthorizationAtOnce() async throws {
        let file = Origin.File(data: Origin.bytes(2_000_000), bytesPerSecond: 1_000_000)
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.protect("/f", OriginLogin([.digestSHA256], user: "ann", password: "pw"))
            var configuration = TransferEngine.Configuration.fast
            configuration.segmentMinimumSplit = 64 * 1024
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: configuration) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), TransferOptions(connections: 4, user: "ann", password: "pw"))
                    #expect(try await h.wait(t.id, for: .completed).sha256 == file.sha256)
                    let ranges = origin.requests(for: "/f").dropFirst(2)
                    #expect(ranges.count >= 3)
                    #expect(ranges.allSatisfy { $0.authorization?.hasPrefix("Digest ") == true })
                    #expect(origin.challenges(for: "/f") == 1)
                    let counts = Set(ranges.compactMap { OriginLogin.fields(String($0.authorization!.dropFirst(7)))["nc"] })
                    #expect(counts.count == ranges.count, "each request its own nc")
                }
            }
        }
    }

    /// The credential never reaches a redirect's other origin (another port of the same host
    /// is another origin), whether from --user or from the store for one port.
    @Test func aRedirectToAnotherOriginGetsNoCredential() async throws {
        try await Origin.run { other, otherBase in
            other.serve("/f", Self.file)
            other.protect("/f", OriginLogin([.basic, .digestMD5], user: "ann", password: "pw"))
            try await Origin.run { origin, base in
                origin.protect("/f", OriginLogin([.digestMD5], user: "ann", password: "pw"))
                origin.redirect("/f", to: otherBase.appendingPathComponent("f").absoluteString)
                try await withTemporaryDirectory { home in
                    try await EngineHarness.run(home: home) { h in
                        let port = try #require(base.port)
                        try await h.journal.saveCredential(StoredCredential(host: "127.0.0.1:\(port)", user: "ann", password: "pw"))
                        let t = try await Self.get(
                            h, base.appendingPathComponent("f"), TransferOptions(maxRetries: 0, user: "ann", password: "pw", authOverHTTP: true)
                        )
                        let failed = try await Self.failure(h, t.id)
                        #expect(failed.error?.message.contains("401") == true)
                        #expect(origin.requests(for: "/f").last?.authorization?.hasPrefix("Digest ") == true, "the first origin was answered")
                        #expect(!other.requests(for: "/f").isEmpty)
                        #expect(other.requests.allSatisfy { $0.authorization == nil }, "\(other.requests.map(\.authorization))")
                    }
                }
            }
        }
    }

    /// Another host altogether (127.0.0.2): the store's and the .netrc's logins for 127.0.0.1
    /// (any port) answer 127.0.0.1 and stay there when it redirects.
    @Test func aRedirectToAnotherHostGetsNeitherStoreNorNetrc() async throws {
        try await Origin.run(address: "127.0.0.2") { other, otherBase in
            other.serve("/f", Self.file)
            other.protect("/f", OriginLogin([.basic], user: "kept", password: "pw"))
            try await Origin.run { origin, base in
                origin.protect("/f", OriginLogin([.digestSHA256], user: "kept", password: "pw"))
                origin.redirect("/f", to: otherBase.appendingPathComponent("f").absoluteString)
                try await withTemporaryDirectory { home in
                    let netrc = home.appendingPathComponent("netrc").path
                    try Data("machine 127.0.0.1 login kept password pw\n".utf8).write(to: URL(fileURLWithPath: netrc))
                    chmod(netrc, 0o600)
                    try await EngineHarness.run(home: home) { h in
                        try await h.journal.saveCredential(StoredCredential(host: "127.0.0.1", user: "kept", password: "pw"))
                        for (session, options) in [("store", TransferOptions(maxRetries: 0, authOverHTTP: true)), ("netrc", TransferOptions(maxRetries: 0, netrcFile: netrc, authOverHTTP: true))] {
                            let t = try await h.engine.enqueue(.init(urls: [base.appendingPathComponent("f")], session: session, options: options))[0]
                            let failed = try await Self.failure(h, t.id)
                            #expect(failed.error?.message.contains("401 Unauthorized for http://127.0.0.2") == true, "\(failed.error?.message ?? "")")
                        }
                        #expect(origin.requests(for: "/f").filter { $0.authorization != nil }.count == 2, "127.0.0.1 was answered each time")
                        #expect(other.requests.count == 2)
                        #expect(other.requests.allSatisfy { $0.authorization == nil && $0.host?.hasPrefix("127.0.0.2") == true })
                    }
                }
            }
        }
    }

    /// A stored password goes over plain http only when the transfer allows it; refused, nothing
    /// carried it.
    @Test func storeCredentialsOverPlainHTTPNeedConsent() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Self.file)
            origin.protect("/f", OriginLogin([.basic], user: "kept", password: "stored-pw"))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    try await h.journal.saveCredential(StoredCredential(host: "127.0.0.1", user: "kept", password: "stored-pw"))
                    let refused = try await Self.get(h, base.appendingPathComponent("f"), TransferOptions(maxRetries: 0))
                    let failed = try await Self.failure(h, refused.id)
                    #expect(failed.error?.code == "authentication_failed")
                    #expect(failed.error?.message.contains("--auth-over-http") == true)
                    #expect(origin.requests.allSatisfy { $0.authorization == nil })
                    let allowed = try await h.engine.enqueue(
                        .init(urls: [base.appendingPathComponent("f")], session: "other", options: TransferOptions(authOverHTTP: true))
                    )[0]
                    #expect(try await h.wait(allowed.id, for: .completed).sha256 == Self.file.sha256)
                    #expect(origin.requests.last?.authorization?.hasPrefix("Basic ") == true)
                }
            }
        }
    }

    @Test func aWrongPasswordFailsClearlyWithoutALoop() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Self.file)
            origin.protect("/f", OriginLogin([.digestMD5], user: "ann", password: "right"))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), TransferOptions(user: "ann", password: "wrong"))
                    let failed = try await Self.failure(h, t.id)
                    #expect(failed.error?.message.hasPrefix("The server refused the user ann's password for 127.0.0.1") == true)
                    #expect(origin.requests(for: "/f").count == 2, "one challenge, one answer, no retry")
                }
            }
        }
    }

    @Test func noCredentialsSaysWhichFlagsGiveThem() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Self.file)
            origin.protect("/f", OriginLogin([.basic], user: "ann", password: "pw"))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), TransferOptions())
                    let failed = try await Self.failure(h, t.id)
                    let message = try #require(failed.error?.message)
                    for flag in ["--user NAME --password-stdin", "--netrc", "ferry credentials add"] { #expect(message.contains(flag), "\(message)") }
                }
            }
        }
    }

    /// `user:password@` in the URL answers the challenge like --user, and is never sent as
    /// Basic to a Digest server.
    @Test func userInfoInTheURL() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Self.file)
            origin.protect("/f", OriginLogin([.digestSHA256], user: "ann", password: "pw"))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let url = try #require(URL(string: "http://ann:pw@127.0.0.1:\(base.port!)/f"))
                    let t = try await Self.get(h, url, TransferOptions())
                    try await h.wait(t.id, for: .completed)
                    #expect(origin.requests.allSatisfy { $0.authorization?.hasPrefix("Basic") != true })
                    #expect(origin.requests.last?.authorization?.hasPrefix("Digest ") == true)
                    // Shown without its password.
                    #expect(try await h.engine.transfer(t.id).url == "http://ann:<redacted>@127.0.0.1:\(base.port!)/f")
                }
            }
        }
    }

    @Test func netrcFileIsReadWhenAsked() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Self.file)
            origin.protect("/f", OriginLogin([.digestMD5], user: "net", password: "rc pass"))
            try await withTemporaryDirectory { home in
                let netrc = home.appendingPathComponent("netrc").path
                try Data("machine 127.0.0.1\n  login net\n  password \"rc pass\"\n".utf8).write(to: URL(fileURLWithPath: netrc))
                chmod(netrc, 0o644)
                try await EngineHarness.run(home: home) { h in
                    let options = TransferOptions(netrcFile: netrc, authOverHTTP: true)
                    await #expect {
                        try await Self.get(h, base.appendingPathComponent("f"), options)
                    } throws: { error in
                        (error as? FerryError)?.message.contains("can be read by other users") == true
                    }
                    #expect(try await h.journal.listTransfers(session: nil, states: nil, limit: nil, after: nil, newestFirst: false).isEmpty)
                    chmod(netrc, 0o600)
                    let t = try await Self.get(h, base.appendingPathComponent("f"), options)
                    #expect(try await h.wait(t.id, for: .completed).sha256 == Self.file.sha256)
                    let row = try await h.journal.transfer(id: t.id)
                    #expect(row?.options?.contains("rc pass") != true)
                }
            }
        }
    }

    /// A resume sends the Digest answer at once (the transfer's answers outlive its attempt); a
    /// nonce the server has since made stale is answered again without asking anyone.
    @Test func aResumeAnswersAtOnceAndAStaleNonceIsAnsweredAgain() async throws {
        let file = Origin.File(data: Origin.bytes(600_000), bytesPerSecond: 400_000)
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.protect("/f", OriginLogin([.digestMD5], user: "ann", password: "pw"))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), TransferOptions(connections: 1, user: "ann", password: "pw"))
                    for (round, expire) in [(1, false), (2, true)] {
                        try await h.wait(t.id, bytes: Int64(round) * 150_000)
                        _ = try await h.engine.pause(t.id)
                        try await h.waitUntilReleased(t.id)
                        if expire { origin.expireNonces() }
                        let before = origin.requests(for: "/f").count
                        _ = try await h.engine.resume(t.id)
                        try await eventually("the resumed request") { origin.requests(for: "/f").count > before }
                        let resumed = origin.requests(for: "/f")[before]
                        #expect(resumed.authorization?.hasPrefix("Digest ") == true, "round \(round): sent at once")
                        #expect(resumed.range != nil)
                    }
                    #expect(try await h.wait(t.id, for: .completed).sha256 == file.sha256)
                    // The first 401, and the stale nonce's: no other.
                    #expect(origin.challenges(for: "/f") == 2)
                }
            }
        }
    }

    /// What AsyncHTTPClient (1.37) does by itself with a URL's `user:password@`: nothing. It sends
    /// no Authorization, so before Ferry answered challenges a URL's credentials were never used
    /// (a protected file failed with 401). Ferry takes them off the URL (a later AsyncHTTPClient
    /// that sent them as Basic would leak the password to a Digest server, and over http) and
    /// answers the server's challenge with them instead. Checked, not assumed.
    @Test func asyncHTTPClientAndUserInfo() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Self.file)
            try await withTestHTTPClient { client in
                let url = "http://ann:pw@127.0.0.1:\(base.port!)/f"
                let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
                _ = try await response.body.collect(upTo: 1 << 20)
                #expect(response.status == .ok)
                let sent = origin.requests(for: "/f").last?.authorization
                #expect(sent == nil, "AsyncHTTPClient now sends \(sent ?? "")")
            }
        }
    }
}
