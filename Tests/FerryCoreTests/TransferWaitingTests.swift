import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Waiting for connectivity: failures that waiting can mend make a transfer `waiting` (with why
/// and when it tries again) until its resource timeout; the network's return ends the wait at
/// once; answers that waiting cannot change fail at once.
@Suite struct TransferWaitingTests {
    /// Backoff long enough that only a network change can bring the next attempt within seconds.
    static var slowRetries: TransferEngine.Configuration {
        var configuration = TransferEngine.Configuration.fast
        configuration.retry = RetryPolicy(baseDelay: .seconds(40), maxDelay: .seconds(60))
        return configuration
    }

    @Test func aRefusedConnectionWaitsAndTheNetworksReturnEndsTheWait() async throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        try await withTemporaryDirectory { home in
            try await EngineHarness.run(home: home, configuration: Self.slowRetries) { h in
                let t = try await h.get(URL(string: "http://127.0.0.1:\(port)/file.bin")!)
                let waiting = try await h.wait(t.id, for: .waiting)
                #expect(waiting.waitReason == "127.0.0.1 refused the connection")
                #expect(waiting.error?.code == "connection_failed")
                let next = try #require(waiting.retryAt)
                #expect(next.timeIntervalSinceNow > 15, "the backoff alone would wait 20–40 s")
                let event = try #require(try await h.events().last { $0.kind == .waiting })
                #expect(event.reason == "127.0.0.1 refused the connection")
                #expect(abs((event.retryAt ?? .distantPast).timeIntervalSince(next)) < 1, "events carry whole seconds")
                #expect(event.attempt == 1)

                // Nothing happens on its own for a while...
                try await Task.sleep(for: .seconds(1))
                #expect(try await h.engine.transfer(t.id).attempts == 1)
                // ...until the network changes: the next attempt comes at once.
                let changed = ContinuousClock.now
                h.engine.network.changed()
                try await eventually("a second attempt", timeout: .seconds(5)) {
                    try await h.engine.transfer(t.id).attempts == 2
                }
                #expect(changed.duration(to: .now) < .seconds(2))
                let again = try await h.wait(t.id, for: .waiting)
                #expect(again.state == .waiting, "still refused: waiting again, not failed")
            }
        }
    }

    /// A busy server named when to come back: a network change does not make the transfer
    /// knock before then.
    @Test func aBusyServerIsWaitedForItsOwnTimeNotWokenByTheNetwork() async throws {
        let file = Origin.File(data: Origin.bytes(10_000), etag: "\"v1\"")
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.status(503, retryAfter: "30")])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: Self.slowRetries) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    let waiting = try await h.wait(t.id, for: .waiting)
                    #expect(waiting.waitReason == "server busy (503 Service Unavailable)")
                    h.engine.network.changed()
                    try await Task.sleep(for: .milliseconds(1500))
                    #expect(origin.requests(for: "/f").count == 1)
                    // A person's resume still tries at once.
                    _ = try await h.engine.resume(t.id)
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                }
            }
        }
    }

    /// A download whose connection went quiet when the network changed (a dead link's TCP
    /// connection hangs until a timeout) reconnects within seconds, continuing with a Range.
    @Test func aQuietDownloadReconnectsWhenTheNetworkChanges() async throws {
        let file = Origin.File(data: Origin.bytes(600_000, seed: 3), etag: "\"v1\"")
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.holdAfter(250_000, gate)])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: Self.slowRetries) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    try await h.wait(t.id, bytes: 250_000)
                    let changed = ContinuousClock.now
                    h.engine.network.changed()
                    let done = try await h.wait(t.id, for: .completed, timeout: .seconds(10))
                    #expect(changed.duration(to: .now) < .seconds(4), "reconnected after a quiet second, not the 40 s backoff")
                    #expect(done.sha256 == file.sha256)
                    let ranges = origin.requests(for: "/f").map(\.range)
                    #expect(ranges == [nil, "bytes=250000-"])
                    let reason = try await h.events().first { $0.kind == .waiting }?.reason
                    #expect(reason == "the network changed; reconnecting")
                }
            }
        }
    }

    /// A download that keeps moving is left alone when the network changes.
    @Test func aMovingDownloadIsNotInterruptedByANetworkChange() async throws {
        let file = Origin.File(data: Origin.bytes(400_000, seed: 4), etag: "\"v1\"", bytesPerSecond: 200_000)
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: Self.slowRetries) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    try await h.wait(t.id, bytes: 50_000)
                    h.engine.network.changed()
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(origin.requests(for: "/f").count == 1)
                }
            }
        }
    }

    static let finalStatuses: [(Int, String)] = [(404, "The file is not there"), (410, "The file is not there"), (401, "It needs credentials"), (403, "It needs credentials")]

    @Test(arguments: finalStatuses)
    func answersThatWaitingCannotChangeFailAtOnce(_ status: Int, _ advice: String) async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", Origin.File(data: Origin.bytes(1000)))
            origin.script("/f", [.status(status)])
            try await withTemporaryDirectory { home in
                var configuration = TransferEngine.Configuration.fast
                configuration.retry = RetryPolicy(baseDelay: .milliseconds(10))  // no attempt limit
                try await EngineHarness.run(home: home, configuration: configuration) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    let failed = try await h.wait(t.id, for: .failed)
                    #expect(failed.attempts == 1)
                    #expect(failed.error?.message.contains(advice) == true, "\(failed.error?.message ?? "")")
                    #expect(failed.waitReason == nil)
                    let events = try await h.events()
                #expect(!events.contains { $0.kind == .waiting })
                    #expect(!h.allFiles().contains { $0.hasPrefix("library/Downloads") })
                }
            }
        }
    }

    @Test func aTransferFailsWhenItsResourceTimeoutPasses() async throws {
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        try await withTemporaryDirectory { home in
            var configuration = TransferEngine.Configuration.fast
            // Short delays against a 3 s timeout: several tries even when a loaded machine (the
            // whole suite at once on two cores) makes each refused connection take a while.
            configuration.retry = RetryPolicy(baseDelay: .milliseconds(100), maxDelay: .milliseconds(200))
            try await EngineHarness.run(home: home, configuration: configuration) { h in
                let started = ContinuousClock.now
                let t = try await h.engine.enqueue(
                    .init(urls: [URL(string: "http://127.0.0.1:\(port)/x")!], session: "test", options: TransferOptions(resourceTimeoutSeconds: 3))
                )[0]
                let failed = try await h.wait(t.id, for: .failed, timeout: .seconds(20))
                #expect(started.duration(to: .now) >= .milliseconds(2500))
                #expect(failed.attempts >= 2)
                let message = failed.error?.message ?? ""
                #expect(message.hasPrefix("Gave up after ") && message.contains(" without progress (the resource timeout is 3 s)."), "\(message)")
                #expect(message.contains("refused the connection"))
            }
        }
    }

    static let badResourceTimeouts: [Double] = [0, -5, 0.5, 400 * 86_400]

    @Test(arguments: badResourceTimeouts)
    func aResourceTimeoutOutOfRangeIsRefusedAndNothingIsJournaled(_ seconds: Double) async throws {
        try await withTemporaryDirectory { home in
            try await EngineHarness.run(home: home) { h in
                await #expect(throws: FerryError.self) {
                    _ = try await h.engine.enqueue(
                        .init(urls: [URL(string: "http://127.0.0.1:9/x")!], session: "test", options: TransferOptions(resourceTimeoutSeconds: seconds))
                    )
                }
                let journaled = try await h.journal.transfers(states: Set(TransferState.allCases))
                #expect(journaled.isEmpty)
            }
        }
    }
}
