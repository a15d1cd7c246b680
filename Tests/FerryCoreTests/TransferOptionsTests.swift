import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Session and transfer options at work against real loopback servers (bandwidth limits are in
/// ``BandwidthTests``): a scheduled start, a session's concurrency, extra headers (and
/// credentials that never show), idle timeouts, retry limits.
@Suite struct TransferOptionsTests {
    @Test func aScheduledTransferDoesNotStartEarly() async throws {
        let file = Origin.File(data: Origin.bytes(10_000))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let start = Date().addingTimeInterval(2)
                    let t = try await h.engine.enqueue(
                        .init(urls: [base.appendingPathComponent("f")], session: "test", options: .init(startAfter: start))
                    )[0]
                    #expect(t.state == .queued)
                    #expect(abs((t.startAfter ?? .distantPast).timeIntervalSince(start)) < 0.01)
                    try await Task.sleep(for: .seconds(1))
                    let state = try await h.engine.transfer(t.id).state
                    if Date() < start { #expect(state == .queued, "still waiting before its time") }
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    let first = try #require(origin.requests.first)
                    #expect(first.date >= start, "requested \(first.date.timeIntervalSince(start)) s after the scheduled time")
                }
            }
        }
    }

    @Test func aSessionRunsAtMostItsOwnNumberOfTransfers() async throws {
        try await Origin.run { origin, base in
            for n in 1...3 { origin.serve("/f\(n)", .init(data: Origin.bytes(100_000, seed: UInt64(n)), bytesPerSecond: 400_000)) }
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    _ = try await h.engine.updateOptions(session: "one-at-a-time", .init(set: .init(maxConcurrent: 1)))
                    let urls = (1...3).map { base.appendingPathComponent("f\($0)") }
                    let transfers = try await h.get(urls, session: "one-at-a-time")
                    for t in transfers { try await h.wait(t.id, for: .completed) }
                    #expect(origin.peakConcurrency == 1)
                }
            }
        }
    }

    @Test func headersReachTheServerAndCredentialsNeverShow() async throws {
        try await Origin.run { other, otherBase in
            other.serve("/moved", .init(data: Origin.bytes(1000)))
            try await Origin.run { origin, base in
                origin.serve("/f", .init(data: Origin.bytes(1000)))
                origin.redirect("/away", to: otherBase.appendingPathComponent("moved").absoluteString)
                try await withTemporaryDirectory { home in
                    try await EngineHarness.run(home: home) { h in
                        let shown = try await h.engine.updateOptions(
                            session: "test", .init(set: .init(headers: ["Authorization": "Bearer s3cret-session"]))
                        )
                        #expect(shown.redacted.headers == ["Authorization": "<redacted>"])
                        let own = TransferOptions(headers: ["Cookie": "id=s3cret-cookie", "X-Request-Tag": "ferry-test"])
                        let transfers = try await h.engine.enqueue(
                            .init(urls: [base.appendingPathComponent("f"), base.appendingPathComponent("away")], session: "test", options: own)
                        )
                        for t in transfers { try await h.wait(t.id, for: .completed) }

                        let seen = try #require(origin.requests(for: "/f").first).headers
                        #expect(seen["authorization"] == "Bearer s3cret-session")
                        #expect(seen["cookie"] == "id=s3cret-cookie")
                        #expect(seen["x-request-tag"] == "ferry-test")
                        // Credentials stay with the origin they were meant for; other headers follow.
                        let elsewhere = try #require(other.requests(for: "/moved").first).headers
                        #expect(elsewhere["authorization"] == nil)
                        #expect(elsewhere["cookie"] == nil)
                        #expect(elsewhere["x-request-tag"] == "ferry-test")

                        let listed = String(decoding: try FerryJSON.encoder().encode(try await h.engine.list()), as: UTF8.self)
                        let events = String(decoding: try FerryJSON.encoder().encode(try await h.events()), as: UTF8.self)
                        for text in [listed, events] { #expect(!text.contains("s3cret")) }
                        #expect(listed.contains("ferry-test"), "harmless headers are shown")
                    }
                }
            }
        }
    }

    @Test func anIdleTimeoutRetriesAStalledDownload() async throws {
        let file = Origin.File(data: Origin.bytes(300_000))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.stallAfter(100_000, .seconds(30))])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.engine.enqueue(
                        .init(urls: [base.appendingPathComponent("f")], session: "test", options: .init(idleTimeoutSeconds: 1))
                    )[0]
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    let retry = try await h.events().first { $0.kind == .waiting }
                    #expect(retry?.error?.code == "timeout")
                }
            }
        }
    }

    /// A server that never completes the connection: the transfer's connect timeout ends the
    /// attempt (AsyncHTTPClient's own is 15 s or more).
    @Test func aConnectTimeoutEndsAConnectionThatNeverCompletes() async throws {
        let silent = try SilentPort()
        try await withTemporaryDirectory { home in
            try await EngineHarness.run(home: home) { h in
                let t = try await h.engine.enqueue(
                    .init(urls: [URL(string: "http://127.0.0.1:\(silent.port)/f")!], session: "test",
                          options: .init(connectTimeoutSeconds: 1, maxRetries: 0))
                )[0]
                // Timed from the moment the attempt runs (under load it may start late).
                try await eventually("the attempt starts", poll: .milliseconds(5)) {
                    try await h.engine.transfer(t.id).state != .queued
                }
                let started = ContinuousClock.now
                let failed = try await h.wait(t.id, for: .failed, timeout: .seconds(12))
                #expect(failed.error?.code == "timeout", "\(failed.error?.message ?? "")")
                // About 1 s; the test client's own connect timeout would take 5 s (under a full
                // suite on two cores the failure has taken 3.6 s to be journaled).
                #expect(started.duration(to: .now) < .seconds(4.8))
            }
        }
        withExtendedLifetime(silent) {}
    }

    @Test func aRetryLimitOfZeroFailsAtTheFirstError() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(1000)))
            origin.script("/f", [.status(503)])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    _ = try await h.engine.updateOptions(session: "test", .init(set: .init(maxRetries: 0)))
                    let t = try await h.get(base.appendingPathComponent("f"))
                    let failed = try await h.wait(t.id, for: .failed)
                    #expect(failed.attempts == 1)
                    #expect(failed.error?.code == "http_status")
                }
            }
        }
    }

    /// A client certificate comes with its key, from one layer; its passphrase never shows;
    /// `insecure` is the transfer's own (a session's is copied into transfers made under it).
    @Test func tlsOptionsKeepTheirRules() throws {
        let pair = TransferOptions(clientCertificate: "/c.pem", clientKey: "/c.key", clientKeyPassphrase: "s3cret")
        try pair.validate()
        #expect(throws: FerryError.self) { try TransferOptions(clientCertificate: "/c.pem").validate() }
        #expect(throws: FerryError.self) { try TransferOptions(clientKeyPassphrase: "s3cret").validate() }
        #expect(throws: FerryError.self) { try TransferOptions(clientCertificate: "c.pem", clientKey: "/c.key").validate() }
        #expect(pair.redacted.clientKeyPassphrase == "<redacted>" && pair.redacted.clientCertificate == "/c.pem")
        let merged = pair.overridden(by: TransferOptions(clientCertificate: "/other.pem", clientKey: "/other.key"))
        #expect(merged.clientCertificate == "/other.pem" && merged.clientKeyPassphrase == nil, "the pair and its passphrase come from one layer")
        #expect(try TransferOptionsUpdate(clear: ["clientCertificate"]).applied(to: pair) == TransferOptions())

        let settings = TransferSettings(session: TransferOptions(insecure: true), own: TransferOptions())
        #expect(settings.merged.insecure == nil, "a session's insecure is copied at creation, not read later")
        #expect(TransferSettings(own: TransferOptions(insecure: true)).merged.insecure == true)
    }

    @Test func updatesAreValidatedAndClearable() async throws {
        try await withTemporaryDirectory { home in
            try await EngineHarness.run(home: home) { h in
                let bad: [TransferOptionsUpdate] = [
                    .init(set: .init(bytesPerSecond: 10)), .init(set: .init(maxConcurrent: 0)),
                    .init(set: .init(headers: ["Bad Name": "x"])), .init(set: .init(headers: ["X-A": "line\r\nInjected: 1"])),
                    .init(set: .init(headers: ["Range": "bytes=0-"])), .init(clear: ["colour"]),
                ]
                for update in bad {
                    await #expect(throws: FerryError.self) { try await h.engine.updateOptions(session: "s", update) }
                }
                #expect(try await h.engine.options(session: "s").isEmpty, "nothing stored from a refused update")
                _ = try await h.engine.updateOptions(session: "s", .init(set: .init(headers: ["X-A": "1", "X-B": "2"], maxRetries: 3)))
                let cleared = try await h.engine.updateOptions(session: "s", .init(set: .init(headers: ["X-A": ""]), clear: ["maxRetries"]))
                #expect(cleared == TransferOptions(headers: ["X-B": "2"]))
                _ = try await h.engine.updateOptions(session: nil, .init(set: .init(bytesPerSecond: 1 << 20)))
                #expect(try await h.engine.options(session: nil).bytesPerSecond == 1 << 20)
                #expect(try await h.engine.options(session: "s") == TransferOptions(headers: ["X-B": "2"]), "the daemon's are apart")
            }
        }
    }
}
