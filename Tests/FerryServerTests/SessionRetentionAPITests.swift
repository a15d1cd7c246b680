import FerryCore
import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Events kept as long as some client will ask for them, and no longer: the daemon prunes a
/// window for sessions that never acknowledge and keeps an acknowledging session's; forgetting a
/// session (a program uninstalled) cancels what it left running and deletes its events.
@Suite struct SessionRetentionAPITests {
    @Test func theDaemonKeepsAWindowForSessionsThatNeverAcknowledgeAndAllOfAnAcknowledgingOnes() async throws {
        var engine = TransferEngine.Configuration.fast
        engine.eventRetention = EventRetention(window: .init(days: 7, count: 3), unacknowledged: .init(days: 90, count: 1000))
        engine.eventPruneInterval = .milliseconds(100)
        try await Origin.run { origin, base in
            for n in 1...4 { origin.serve("/\(n)", .init(data: Origin.bytes(1000, seed: UInt64(n)))) }
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home, engine: engine) { d in
                    let urls = (1...2).map { base.appendingPathComponent("\($0)").absoluteString }
                    let cli = try await d.client.createTransfers(.init(urls: urls, session: "cli")).transfers.map(\.id)
                    let app = try await d.client.createTransfers(.init(urls: (3...4).map { base.appendingPathComponent("\($0)").absoluteString }, session: "app"))
                    try await d.client.acknowledge(session: "app", through: app.lastEventSeq - 1)
                    for id in cli + app.transfers.map(\.id) {
                        try await eventually("transfer \(id) to complete") { try await d.client.transfer(id).state == .completed }
                    }
                    let journal = d.daemon.engine.journal
                    try await eventually("the CLI's events pruned to three") { try await journal.events(session: "cli", after: 0).count == 3 }
                    let kept = try await journal.events(session: "cli", after: 0)
                    #expect(kept.allSatisfy { $0.kind == .completed || $0.kind == .started }, "the newest three: \(kept.map(\.kind))")
                    // A stream from before the pruned events starts with a resync; one after it does not.
                    let pruned = try await journal.prunedSeq(session: "cli")
                    #expect(pruned > 0 && pruned < kept[0].seq!)
                    #expect(try await Self.firstItems(d, session: "cli", after: 0).first == "resync \(pruned)")
                    #expect(try await Self.firstItems(d, session: nil, after: 0).first == "resync \(try await journal.prunedSeq(session: nil))")
                    let fresh = try await Self.firstItems(d, session: "cli", after: pruned)
                    #expect(!fresh.contains { $0.hasPrefix("resync") } && fresh.last == "replayed", "\(fresh)")
                    // The acknowledging session keeps every event it has not acknowledged.
                    let appEvents = try await journal.events(session: "app", after: 0)
                    #expect(appEvents.filter { $0.kind == .completed }.count == 2)
                    #expect(appEvents.count > 3)
                }
            }
        }
    }

    @Test func finishedTransfersBeyondTheHistorysRetentionLeaveTheListAndKeepTheirFiles() async throws {
        var engine = TransferEngine.Configuration.fast
        engine.historyRetention = RetentionLimit(days: 365, count: 2)
        engine.eventPruneInterval = .milliseconds(100)
        try await Origin.run { origin, base in
            for n in 1...3 { origin.serve("/h\(n)", .init(data: Origin.bytes(1000, seed: UInt64(10 + n)))) }
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home, engine: engine) { d in
                    var done: [Transfer] = []
                    for n in 1...3 {
                        let id = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("h\(n)").absoluteString])).transfers[0].id
                        try await eventually("h\(n) to complete") { try await d.client.transfer(id).state == .completed }
                        done.append(try await d.client.transfer(id))
                    }
                    let held = Origin.Gate()
                    origin.serve("/slow", .init(data: Origin.bytes(256 << 10)))
                    origin.script("/slow", [.holdAfter(1024, held)])
                    let running = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("slow").absoluteString])).transfers[0].id
                    try await eventually("the oldest finished one to leave the list") {
                        try await d.client.transfers().transfers.map(\.id) == [done[1].id, done[2].id, running]
                    }
                    held.open()
                    #expect(FileManager.default.fileExists(atPath: try #require(done[0].path)), "its file stays")
                }
            }
        }
    }

    /// A stream's messages up to the end of its replay, in short: "resync N", "event SEQ", "replayed".
    static func firstItems(_ d: DaemonHarness, session: String?, after: Int64) async throws -> [String] {
        let response = try await d.client.openEventStream(session: session, after: after)
        var decoder = EventStreamDecoder()
        var items: [String] = []
        for try await chunk in response.body {
            for item in decoder.feed(chunk) {
                switch item {
                case .resync(let resync): items.append("resync \(resync.prunedThrough)")
                case .event(let event, _): items.append("event \(event.seq ?? -1)")
                case .replayed: return items + ["replayed"]
                case .unknown(let message): throw TestFailure("an undecodable \(message.event) message")
                }
            }
        }
        throw TestFailure("the stream ended before its replay did")
    }

    @Test func forgettingASessionCancelsWhatItLeftRunningAndDeletesItsEvents() async throws {
        let held = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/held", .init(data: Origin.bytes(512 << 10)))
            origin.script("/held", [.holdAfter(64 << 10, held)])
            origin.serve("/done", .init(data: Origin.bytes(1000)))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let done = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("done").absoluteString], session: "com.example.gone")).transfers[0]
                    try await eventually("the small one done") { try await d.client.transfer(done.id).state == .completed }
                    let running = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("held").absoluteString], session: "com.example.gone")).transfers[0]
                    try await eventually("the held one under way") { try await d.client.transfer(running.id).bytesReceived >= 64 << 10 }
                    _ = try await d.client.updateSessionConfiguration("com.example.gone", TransferOptionsUpdate(set: TransferOptions(maxRetries: 2)))
                    _ = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("done").absoluteString], session: "other", force: true))

                    let forgotten = try await d.client.forgetSession("com.example.gone")
                    held.open()
                    #expect(forgotten.cancelled == [running.id])
                    #expect(forgotten.eventsDeleted > 0)
                    #expect(try await d.client.transfer(running.id).state == .cancelled)
                    #expect(try await d.client.transfer(done.id).state == .completed, "finished transfers stay")
                    let journal = d.daemon.engine.journal
                    #expect(try await journal.events(session: "com.example.gone", after: 0).isEmpty)
                    #expect(try await journal.sessionOptions("com.example.gone") == TransferOptions())
                    #expect(try await !journal.events(session: "other", after: 0).isEmpty, "other sessions keep theirs")

                    await #expect(throws: FerryError.self) { try await d.client.forgetSession("bad name/") }
                }
            }
        }
    }
}
