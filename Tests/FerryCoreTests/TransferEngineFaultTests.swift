import AsyncHTTPClient
import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Broken servers: drops, stalls, error statuses, lies, bad redirects. Each ends either in a
/// completed file with the right bytes or in a clear failure with nothing saved as media.
@Suite struct TransferEngineFaultTests {
    @Test func aDroppedConnectionIsRetriedFromTheBytesOnDisk() async throws {
        let file = Origin.File(data: Origin.bytes(500_000))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.dropAfter(200_000)])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    let requests = origin.requests(for: "/f")
                    #expect(requests.count == 2)
                    let offset = Int(requests[1].range?.dropFirst(6).dropLast() ?? "") ?? 0
                    #expect(offset > 0 && offset <= 200_000)
                    #expect(try await h.events().contains { $0.kind == .waiting })
                }
            }
        }
    }

    /// Most https servers speak HTTP/2, which the client negotiates (ALPN): there a dropped
    /// response is a reset stream, not a closed connection, and the retry is another stream.
    @Test func overHTTP2ADroppedResponseIsRetriedFromTheBytesOnDisk() async throws {
        let file = Origin.File(data: Origin.bytes(3_000_000, seed: 7))
        try await Origin.run(http2: true) { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.dropAfter(1_200_000)])
            try await withTemporaryDirectory { home in
                try await withTestHTTPClient(trustTestCertificate: true) { client in
                    try await EngineHarness.run(home: home, httpClient: client) { h in
                        let t = try await h.get(base.appendingPathComponent("f"), connections: 1)
                        let done = try await h.wait(t.id, for: .completed)
                        #expect(done.sha256 == file.sha256)
                        let requests = origin.requests(for: "/f")
                        #expect(requests.count == 2)
                        let overHTTP2 = requests.map(\.http2)
                        #expect(overHTTP2 == [true, true])
                        let offset = Int(requests.last?.range?.dropFirst(6).dropLast() ?? "") ?? 0
                        let ranges = requests.map(\.range)
                        #expect(offset > 0 && offset <= 1_200_000, "resumed from the bytes on disk: \(ranges)")
                        let resent = origin.bytesSentPerRequest("/f").last
                        #expect(resent == file.data.count - offset)
                    }
                }
            }
        }
    }

    /// Downloads from one HTTP/2 host share its connection: pausing one ends only its stream.
    /// All three are held at 100,000 bytes, so the others are certainly mid-stream at the pause.
    @Test func overHTTP2PausingOneDownloadLeavesTheOthersOnTheConnection() async throws {
        let files = (1...3).map { Origin.File(data: Origin.bytes(600_000, seed: UInt64($0))) }
        let gate = Origin.Gate()
        try await Origin.run(http2: true) { origin, base in
            for (n, file) in files.enumerated() {
                origin.serve("/f\(n)", file)
                origin.script("/f\(n)", [.holdAfter(100_000, gate)])
            }
            try await withTemporaryDirectory { home in
                try await withTestHTTPClient(trustTestCertificate: true) { client in
                    try await EngineHarness.run(home: home, httpClient: client) { h in
                        let transfers = try await h.get(files.indices.map { base.appendingPathComponent("f\($0)") })
                        for t in transfers { try await h.wait(t.id, bytes: 100_000) }
                        let paused = try await h.engine.pause(transfers[0].id)
                        #expect(paused.state == .paused)
                        gate.open()
                        for (t, file) in zip(transfers, files).dropFirst() {
                            let done = try await h.wait(t.id, for: .completed)
                            #expect(done.sha256 == file.sha256)
                        }
                        _ = try await h.engine.resume(transfers[0].id)
                        let resumed = try await h.wait(transfers[0].id, for: .completed)
                        #expect(resumed.sha256 == files[0].sha256)
                        let counts = files.indices.map { origin.requests(for: "/f\($0)").count }
                        #expect(counts == [2, 1, 1], "the paused one asked again, the others once each")
                        let overHTTP2 = origin.requests.map(\.http2)
                        #expect(overHTTP2.allSatisfy { $0 })
                        let connections = Set(origin.requests.prefix(3).map(\.connection))
                        #expect(connections.count == 1, "the three downloads shared one connection")
                        #expect(origin.requests(for: "/f0").last?.range == "bytes=100000-")
                    }
                }
            }
        }
    }

    @Test func aStalledResponseTimesOutAndIsRetried() async throws {
        let file = Origin.File(data: Origin.bytes(300_000))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.stallAfter(100_000, .seconds(30))])
            try await withTemporaryDirectory { home in
                // A read timeout far above a busy machine's pauses, far below the stall.
                try await withTestHTTPClient(readTimeout: .seconds(2)) { client in
                    try await EngineHarness.run(home: home, httpClient: client) { h in
                        let t = try await h.get(base.appendingPathComponent("f"))
                        let done = try await h.wait(t.id, for: .completed)
                        #expect(done.sha256 == file.sha256)
                        let retry = try await h.events().first { $0.kind == .waiting }
                        #expect(retry?.error?.code == "timeout")
                    }
                }
            }
        }
    }

    @Test func retryAfterIsHonouredOnTheInjectedClock() async throws {
        let file = Origin.File(data: Origin.bytes(10_000))
        let clock = ManualClock()
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.status(503, retryAfter: "120"), .status(429, retryAfter: "7")])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, clock: clock) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    try await h.wait(t.id, for: .waiting)
                    try await clock.waitForSleepers()
                    #expect(clock.requestedSleeps.last == .seconds(120))
                    #expect(origin.requests(for: "/f").count == 1)
                    clock.advance(by: .seconds(119))
                    try await Task.sleep(for: .milliseconds(50))
                    #expect(origin.requests(for: "/f").count == 1, "not before Retry-After")
                    clock.advance(by: .seconds(1))
                    try await eventually("the second attempt") { origin.requests(for: "/f").count == 2 }
                    try await clock.waitForSleepers()
                    #expect(clock.requestedSleeps.last == .seconds(7))
                    clock.advance(by: .seconds(7))
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    let retries = try await h.events().filter { $0.kind == .waiting }
                    #expect(retries.map { $0.error?.message.contains("503") } == [true, false])
                    #expect(retries.count == 2)
                }
            }
        }
    }

    @Test func backoffGrowsExponentiallyWithJitter() async throws {
        let clock = ManualClock()
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(100)))
            origin.script("/f", [.status(500), .status(502), .status(504)])
            try await withTemporaryDirectory { home in
                var configuration = TransferEngine.Configuration.fast
                configuration.retry = RetryPolicy(maxAttempts: 8, baseDelay: .seconds(1), maxDelay: .seconds(60))
                try await EngineHarness.run(home: home, configuration: configuration, clock: clock) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    for expected in [Duration.milliseconds(750), .milliseconds(1500), .milliseconds(3000)] {
                        try await clock.waitForSleepers()
                        // The harness's random source returns 0.5: half the step plus a quarter.
                        #expect(clock.requestedSleeps.last == expected)
                        clock.advance(by: expected)
                    }
                    try await h.wait(t.id, for: .completed)
                }
            }
        }
    }

    @Test func givesUpAfterMaxAttemptsWithAClearError() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(100)))
            origin.script("/f", Array(repeating: .status(503), count: 4))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    let failed = try await h.wait(t.id, for: .failed)
                    #expect(failed.error?.code == "http_status")
                    #expect(failed.error?.message.contains("Gave up after 4 failed attempts") == true)
                    #expect(failed.error?.message.contains("503") == true)
                    #expect(origin.requests(for: "/f").count == 4)
                    // Resume tries again (and the origin has recovered by then).
                    _ = try await h.engine.resume(t.id)
                    try await h.wait(t.id, for: .completed)
                }
            }
        }
    }

    @Test(arguments: [404, 403, 410, 400])
    func clientErrorsFailAtOnceAndSaveNothing(status: Int) async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(100)))
            origin.script("/f", [.status(status)])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    let failed = try await h.wait(t.id, for: .failed)
                    #expect(failed.error?.message.contains("\(status)") == true)
                    #expect(origin.requests(for: "/f").count == 1)
                    #expect(h.allFiles().filter { $0.hasPrefix("library/Downloads") }.isEmpty)
                    #expect(try await h.events().contains { $0.kind == .waiting } == false)
                }
            }
        }
    }

    @Test func aContentLengthLongerThanTheBodyNeverCompletes() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(50_000)))
            // Every request lies: an attempt may take two (a range request, then a fresh start), so
            // a short script would run out within the retry budget and the truth would complete it.
            origin.script("/f", Array(repeating: .contentLengthExtra(1000), count: 100))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    let failed = try await h.wait(t.id, for: .failed)
                    #expect(failed.error != nil)
                    #expect(failed.path == nil)
                    #expect(h.allFiles().filter { $0.hasPrefix("library/Downloads") }.isEmpty)
                }
            }
        }
    }

    @Test func followsRedirectsAndNamesTheFileAfterTheLastHop() async throws {
        let file = Origin.File(data: Origin.bytes(4000))
        try await Origin.run { origin, base in
            origin.serve("/cdn/real-name.mp3", file)
            origin.redirect("/start", to: "/hop1", status: 301)
            origin.redirect("/hop1", to: "\(base.absoluteString)/hop2", status: 307)
            origin.redirect("/hop2", to: "cdn/real-name.mp3", status: 302)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("start"))
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(URL(fileURLWithPath: done.path!).lastPathComponent == "real-name.mp3")
                    #expect(done.url == base.appendingPathComponent("start").absoluteString)
                }
            }
        }
    }

    @Test func redirectLoopsAndLongChainsFail() async throws {
        try await Origin.run { origin, base in
            origin.redirect("/a", to: "/b")
            origin.redirect("/b", to: "/a")
            for n in 0..<12 { origin.redirect("/chain\(n)", to: "/chain\(n + 1)") }
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let loop = try await h.get(base.appendingPathComponent("a"))
                    let loopFailed = try await h.wait(loop.id, for: .failed)
                    #expect(loopFailed.error?.code == "too_many_redirects")
                    #expect(loopFailed.error?.message.contains("loop") == true)
                    let chain = try await h.get(base.appendingPathComponent("chain0"))
                    let chainFailed = try await h.wait(chain.id, for: .failed)
                    #expect(chainFailed.error?.message.contains("More than 10 redirects") == true)
                    #expect(origin.requests.filter { $0.path.hasPrefix("/chain") }.count == 11)
                }
            }
        }
    }

    @Test func aRedirectToAFileURLIsRefused() async throws {
        try await Origin.run { origin, base in
            origin.redirect("/evil", to: "file:///etc/passwd")
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("evil"))
                    let failed = try await h.wait(t.id, for: .failed)
                    #expect(failed.error?.code == "redirect_refused")
                    #expect(failed.error?.message.contains("file:///etc/passwd") == true)
                    #expect(h.allFiles().filter { $0.hasPrefix("library/Downloads") }.isEmpty)
                }
            }
        }
    }

    @Test func anHTTPSToHTTPDowngradeIsRefused() async throws {
        try await Origin.run { plain, plainBase in
            plain.serve("/f", .init(data: Origin.bytes(100)))
            try await Origin.run(tls: true) { secure, secureBase in
                secure.serve("/ok", .init(data: Origin.bytes(200)))
                secure.redirect("/down", to: plainBase.appendingPathComponent("f").absoluteString)
                try await withTemporaryDirectory { home in
                    try await withTestHTTPClient(trustTestCertificate: true) { client in
                        try await EngineHarness.run(home: home, httpClient: client) { h in
                            // https itself works...
                            let ok = try await h.get(secureBase.appendingPathComponent("ok"))
                            try await h.wait(ok.id, for: .completed)
                            // ...but not a hop down to http.
                            let t = try await h.get(secureBase.appendingPathComponent("down"))
                            let failed = try await h.wait(t.id, for: .failed)
                            #expect(failed.error?.code == "redirect_refused")
                            #expect(failed.error?.message.contains("downgrade") == true)
                            #expect(plain.requests.isEmpty)
                        }
                    }
                }
            }
        }
    }

    @Test func connectionRefusedIsRetriedThenFails() async throws {
        // The discard port: nothing listens there on a test machine. (A port a test server just
        // gave up can still accept connections while that server winds down.)
        try await withTemporaryDirectory { home in
            try await EngineHarness.run(home: home) { h in
                let t = try await h.get(URL(string: "http://127.0.0.1:9/nothing")!)
                let failed = try await h.wait(t.id, for: .failed)
                #expect(failed.error?.code == "connection_failed")
                #expect(failed.error?.message.hasSuffix("Last error: 127.0.0.1 refused the connection.") == true)
                #expect(failed.attempts == 4)
            }
        }
    }
}
