import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Server-Sent Events with journal sequence numbers: replay after Last-Event-ID, the mark at its
/// end, acknowledgement, and session isolation.
@Suite struct EventStreamTests {
    @Test func streamsAndReplaysEveryJournaledEventOfTheSession() async throws {
        // Held at 300,000 bytes until the stream is open, then a second's worth of live progress.
        let file = Origin.File(data: Origin.bytes(600_000), bytesPerSecond: 300_000)
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/a", file)
            origin.script("/a", [.holdAfter(300_000, gate)])
            origin.serve("/b", .init(data: Origin.bytes(1000, seed: 2)))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let created = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("a").absoluteString], session: "one"))
                    _ = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("b").absoluteString], session: "two"))
                    let id = created.transfers[0].id
                    let live = try await d.collectEvents(session: "one", after: created.lastEventSeq) { events in
                        if !events.isEmpty { gate.open() }
                        return events.contains { $0.kind == .completed }
                    }
                    #expect(live.allSatisfy { $0.session == "one" && $0.transferId == id })
                    #expect(live.first?.kind == .created)
                    #expect(live.contains { $0.kind == .started })
                    #expect(live.contains { $0.kind == .progress && $0.seq == nil && $0.bytesPerSecond != nil }, "live progress")
                    let completed = try #require(live.first { $0.kind == .completed })
                    #expect(completed.sha256 == file.sha256)
                    #expect(completed.path?.hasSuffix("/Downloads/a") == true)
                    let journaled = live.compactMap(\.seq)
                    #expect(journaled == journaled.sorted())

                    // Reconnecting with Last-Event-ID replays exactly what came after it.
                    let cut = journaled[1]
                    let replay = try await d.collectEvents(session: "one", after: cut) { events in
                        events.contains { $0.kind == .completed }
                    }
                    #expect(replay.compactMap(\.seq) == journaled.filter { $0 > cut })
                    #expect(replay.allSatisfy { $0.seq != nil }, "a replay has no live progress for a finished transfer")
                }
            }
        }
    }

    @Test func acknowledgedEventsAreNotReplayed() async throws {
        try await Origin.run { origin, base in
            origin.serve("/a", .init(data: Origin.bytes(1000)))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let id = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("a").absoluteString], session: "app")).transfers[0].id
                    try await eventually("done") { try await d.client.transfer(id).state == .completed }
                    // Without Last-Event-ID a new client gets everything not yet acknowledged...
                    let all = try await d.collectEvents(session: "app", after: nil) { $0.contains { $0.kind == .completed } }
                    let completedSeq = try #require(all.first { $0.kind == .completed }?.seq)
                    // ...until it acknowledges them.
                    try await d.client.acknowledge(session: "app", through: completedSeq)
                    let got1 = try await d.client.session("app").acknowledgedSeq
                    #expect(got1 == completedSeq)
                    let second = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("a").absoluteString], session: "app", force: true)).transfers[0].id
                    let after = try await d.collectEvents(session: "app", after: nil) { $0.contains { $0.kind == .completed } }
                    #expect(after.allSatisfy { $0.transferId == second })
                    #expect(after.first?.kind == .created)
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(1))) func theReplayEndsWithAMarkEvenWhenTheNewestEventIsAnotherSessions() async throws {
        try await Origin.run { origin, base in
            origin.serve("/a", .init(data: Origin.bytes(1000)))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    for session in ["one", "two"] {
                        let id = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("a").absoluteString], session: session)).transfers[0].id
                        try await eventually("\(session)'s download done") { try await d.client.transfer(id).state == .completed }
                    }
                    let journaled = try await d.daemon.engine.journal.events(session: "one", after: 0).compactMap(\.seq)
                    let newest = try await d.daemon.engine.journal.lastEventSeq()
                    #expect(try #require(journaled.max()) < newest, "the newest event is two's")

                    // Everything one has not acknowledged, then the mark: nothing to wait for.
                    let (replayed, end) = try await replayOf(d, session: "one", after: nil)
                    #expect(replayed == journaled.map(String.init))
                    #expect(end == ReplayEnd(through: journaled.max()!))

                    // Nothing left to replay: the mark comes at once, through the starting point.
                    let (none, endOfNone) = try await replayOf(d, session: "one", after: newest)
                    #expect(none.isEmpty)
                    #expect(endOfNone == ReplayEnd(through: newest))
                }
            }
        }
    }

    /// The SSE ids of the events before the stream's `replayed` mark, and the mark.
    private func replayOf(_ d: DaemonHarness, session: String, after: Int64?) async throws -> ([String], ReplayEnd) {
        let response = try await d.client.openEventStream(session: session, after: after)
        var decoder = EventStreamDecoder()
        var ids: [String] = []
        for try await chunk in response.body {
            for item in decoder.feed(chunk) {
                switch item {
                case .event(_, let id): ids.append(id ?? "none")
                case .replayed(let end): return (ids, end)
                case .resync(let resync): ids.append("resync \(resync.prunedThrough)")
                case .unknown(let message): throw TestFailure("an undecodable \(message.event) message: \(message.data)")
                }
            }
        }
        throw TestFailure("the stream ended without a replayed mark")
    }

    @Test func badLastEventIDIsRefused() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let response = try await d.raw(.GET, "/v1/sessions/cli/events", headers: [("Last-Event-ID", "yesterday")])
                #expect(response.status == 400)
                let badSession = try await d.raw(.GET, "/v1/sessions/a%20b/events")
                #expect(badSession.status == 400)
                let badAck = try await d.raw(.POST, "/v1/sessions/cli/ack", headers: [("Content-Type", "application/json")], body: #"{"through":-1}"#)
                #expect(badAck.status == 400)
            }
        }
    }
}
