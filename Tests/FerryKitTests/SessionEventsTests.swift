import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Background semantics: a program that went away learns on its next run what it missed, once
/// it has acknowledged never again; sessions are isolated; the event sequence survives a daemon
/// restart and has one consumer at a time.
@Suite struct SessionEventsTests {
    @Test func theNextRunReceivesTheCompletionsItMissedAndAfterAcknowledgingNeverAgain() async throws {
        let a = Origin.File(data: Origin.bytes(200_000, seed: 1))
        let b = Origin.File(data: Origin.bytes(300_000, seed: 2))
        try await Origin.run { origin, base in
            origin.serve("/a.mp3", a)
            origin.serve("/b.mp3", b)
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    // First run: starts two downloads and goes away without listening.
                    var first: BackgroundSession? = try await d.session("podcasts")
                    let idA = try await first!.downloadTask(with: base.appendingPathComponent("a.mp3")).taskIdentifier
                    let idB = try await first!.downloadTask(with: base.appendingPathComponent("b.mp3")).taskIdentifier
                    first = nil
                    try await eventually("both downloads to complete") {
                        try await d.client.transfers(session: "podcasts").transfers.allSatisfy { $0.state == .completed }
                    }

                    // Second run: everything it missed, oldest first, with where the files are.
                    let second = try await d.session("podcasts")
                    let missed = try await collect(second) { $0.finished.count == 2 }
                    #expect(missed.filter { $0.kind == .didCreate }.map(\.taskIdentifier) == [idA, idB], "\(missed.summary)")
                    #expect(missed.count { $0.finish != nil } == 2, "each completion once: \(missed.summary)")
                    let finishedA = try #require(missed.finished[idA])
                    let finishedB = try #require(missed.finished[idB])
                    #expect(finishedA.sha256 == a.sha256)
                    #expect(finishedB.sha256 == b.sha256)
                    #expect(FileManager.default.contents(atPath: finishedA.location.path) == a.data)
                    #expect(FileManager.default.contents(atPath: finishedB.location.path) == b.data)
                    #expect(finishedA.location.path.hasPrefix(d.paths.library.path))
                    #expect(missed.allSatisfy { $0.seq != nil }, "a replay of finished downloads has no live progress")
                    #expect(nonIncreasing(missed.seqs).isEmpty, "\(missed.seqs)")

                    // Not acknowledged yet: another run would receive them again.
                    let unacknowledged = try await d.session("podcasts").missedEvents()
                    #expect(unacknowledged.seqs == missed.seqs)

                    // Acknowledged: a third run receives them no more…
                    try await second.acknowledge(through: try #require(missed.seqs.max()))
                    let third = try await d.session("podcasts")
                    let afterAcknowledging = try await third.missedEvents()
                    #expect(afterAcknowledging.isEmpty, "\(afterAcknowledging.summary)")
                    // …and its live events start after them.
                    let c = try await third.downloadTask(with: base.appendingPathComponent("a.mp3"))
                    let live = try await collect(third) { $0.finished[c.taskIdentifier] != nil }
                    #expect(live.allSatisfy { $0.taskIdentifier == c.taskIdentifier }, "\(live.summary)")
                    #expect(live.first?.kind == .didCreate)
                }
            }
        }
    }

    @Test func oneSessionObjectDeliversEachEventOnce() async throws {
        try await Origin.run { origin, base in
            origin.serve("/a", .init(data: Origin.bytes(50_000)))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let session = try await d.session("app")
                    let first = try await session.downloadTask(with: base.appendingPathComponent("a"))
                    try await eventually("done") { try await d.client.transfer(first.taskIdentifier).state == .completed }

                    let missed = try await session.missedEvents()
                    #expect(missed.finished[first.taskIdentifier]?.sha256 == Origin.bytes(50_000).sha256Hex, "\(missed.summary)")
                    // The same object already delivered them: not again, though not acknowledged.
                    let again = try await session.missedEvents()
                    #expect(again.isEmpty, "\(again.summary)")
                    // Its live sequence continues after them.
                    let second = try await session.downloadTask(with: base.appendingPathComponent("a"))
                    let live = try await collect(session) { $0.finished[second.taskIdentifier] != nil }
                    #expect(live.allSatisfy { $0.taskIdentifier == second.taskIdentifier }, "\(live.summary)")
                    #expect(Set(live.seqs).isDisjoint(with: missed.seqs))
                }
            }
        }
    }

    @Test func twoSessionsNeverSeeEachOthersEvents() async throws {
        // Both downloads wait at 100,000 bytes until both event streams are open (each has
        // replayed its session's didCreate), then finish throttled, sending live progress.
        let a = Origin.File(data: Origin.bytes(300_000, seed: 1), bytesPerSecond: 400_000)
        let b = Origin.File(data: Origin.bytes(300_000, seed: 2), bytesPerSecond: 400_000)
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/a", a)
            origin.serve("/b", b)
            origin.script("/a", [.holdAfter(100_000, gate)])
            origin.script("/b", [.holdAfter(100_000, gate)])
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let one = try await d.session("one")
                    let two = try await d.session("two")
                    let taskOne = try await one.downloadTask(with: base.appendingPathComponent("a"))
                    let taskTwo = try await two.downloadTask(with: base.appendingPathComponent("b"))
                    let (logOne, logTwo) = (EventLog(), EventLog())
                    async let eventsOne = collect(one, log: logOne) { $0.finished[taskOne.taskIdentifier] != nil }
                    async let eventsTwo = collect(two, log: logTwo) { $0.finished[taskTwo.taskIdentifier] != nil }
                    try await eventually("both event streams to open") { !logOne.events.isEmpty && !logTwo.events.isEmpty }
                    gate.open()
                    let (seenByOne, seenByTwo) = try await (eventsOne, eventsTwo)

                    #expect(seenByOne.allSatisfy { $0.taskIdentifier == taskOne.taskIdentifier }, "\(seenByOne.summary)")
                    #expect(seenByTwo.allSatisfy { $0.taskIdentifier == taskTwo.taskIdentifier }, "\(seenByTwo.summary)")
                    #expect(seenByOne.contains { $0.seq == nil }, "live progress reached its own session")
                    #expect(seenByOne.finished[taskOne.taskIdentifier]?.sha256 == a.sha256)
                    #expect(seenByTwo.finished[taskTwo.taskIdentifier]?.sha256 == b.sha256)

                    // Nor each other's tasks, nor each other's backlog in a later run.
                    let tasksOfOne = try await one.allTasks().map(\.taskIdentifier)
                    #expect(tasksOfOne == [taskOne.taskIdentifier])
                    let foreign = try await one.task(withIdentifier: taskTwo.taskIdentifier)
                    #expect(foreign == nil)
                    // The newest journal events are now one's; a later run of two still gets its
                    // whole backlog, and no more, from the daemon's mark at the end of the replay.
                    let extra = try await one.downloadTask(with: base.appendingPathComponent("a"))
                    _ = try await collect(one) { $0.finished[extra.taskIdentifier] != nil }
                    let laterTwo = try await d.session("two")
                    let backlogOfTwo = try await laterTwo.missedEvents()
                    #expect(backlogOfTwo.seqs == seenByTwo.seqs, "\(backlogOfTwo.summary)")
                    #expect(backlogOfTwo.first?.kind == .didCreate)
                    #expect(backlogOfTwo.finished[taskTwo.taskIdentifier] != nil)
                    #expect(backlogOfTwo.allSatisfy { $0.taskIdentifier == taskTwo.taskIdentifier }, "\(backlogOfTwo.summary)")
                    #expect(nonIncreasing(backlogOfTwo.seqs).isEmpty, "\(backlogOfTwo.summary)")
                }
            }
        }
    }

    @Test func theEventSequenceCarriesOnAcrossADaemonRestart() async throws {
        // The first daemon's request is held at 250,000 bytes until it has stopped, so it stops
        // mid-download however slow the machine is; the second daemon's request is not held.
        let file = Origin.File(data: Origin.bytes(600_000, seed: 3), bytesPerSecond: 600_000)
        let held = 250_000
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/big", file)
            origin.script("/big", [.holdAfter(held, gate)])
            try await withTemporaryDirectory { home in
                // The first daemon: a download starts and a consumer listens.
                let (listening, id) = try await DaemonHarness.run(home: home) { d in
                    let session = try await d.session("app")
                    let task = try await session.downloadTask(with: base.appendingPathComponent("big"))
                    let listening = Task { try await collect(session, timeout: .seconds(60)) { $0.finished[task.taskIdentifier] != nil } }
                    try await eventually("the bytes before the hold") {
                        try await task.refresh()
                        return task.countOfBytesReceived == Int64(held)
                    }
                    return (listening, task.taskIdentifier)
                }
                gate.open()
                // It stops mid-download; a second daemon on the same state (another port)
                // finishes it, and the same iteration hears of it.
                let events = try await DaemonHarness.run(home: home) { _ in try await value(of: listening, within: .seconds(60)) }

                #expect(nonIncreasing(events.seqs).isEmpty, "no journaled event twice, none out of order: \(events.summary)")
                #expect(events.count(of: .didCreate) == 1)
                #expect(events.filter { $0.finish != nil }.count == 1)
                #expect(events.finished[id]?.sha256 == file.sha256)
                // The first daemon's stop made everything it had received durable.
                #expect(events.compactMap(\.resumeOffset) == [Int64(held)], "\(events.summary)")
                // (The held response, let go once nobody reads it, counts what it wrote after.)
                let sent = origin.bytesSentPerRequest("/big")
                #expect(sent.count == 2 && sent.last == file.data.count - held, "only the remainder was fetched again: \(sent)")
            }
        }
    }

    @Test func aNewIterationEndsThePreviousOneAndNothingIsDeliveredTwice() async throws {
        // Held at 200,000 bytes until the first iteration has ended, so the download finishes
        // while the second one listens.
        let file = Origin.File(data: Origin.bytes(400_000, seed: 4), bytesPerSecond: 400_000)
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/a", file)
            origin.script("/a", [.holdAfter(200_000, gate)])
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let session = try await d.session("app")
                    let task = try await session.downloadTask(with: base.appendingPathComponent("a"))
                    let log = EventLog()
                    let firstIteration = Task {
                        for try await event in session.events { log.append(event) }
                        return log.events
                    }
                    try await eventually("the first iteration to receive events") { log.events.count >= 2 }

                    async let secondIteration = collect(session) { $0.finished[task.taskIdentifier] != nil }
                    let first = try await value(of: firstIteration, within: .seconds(20))
                    gate.open()
                    let second = try await secondIteration

                    #expect(Set(first.seqs).isDisjoint(with: second.seqs), "first: \(first.summary)\nsecond: \(second.summary)")
                    // Together they delivered every journaled event of the session, in order.
                    let all = try await d.collectEvents(session: "app", after: 0) { $0.contains { $0.kind == .completed } }
                    #expect(first.seqs + second.seqs == all.compactMap(\.seq))
                }
            }
        }
    }
}

/// Retention as iOS keeps it: a program away for a week still learns what finished while it was
/// gone, the CLI's window does not keep that long, a program gone past the documented limit (90
/// days) finds its events dropped, and one forgotten finds nothing at all.
@Suite struct SessionRetentionTests {
    @Test func aProgramAwayForAWeekStillGetsItsEventsAndAForgottenOneNone() async throws {
        try await Origin.run { origin, base in
            for name in ["a", "b", "c"] { origin.serve("/\(name)", .init(data: Origin.bytes(20_000, seed: UInt64(name.unicodeScalars.first!.value)))) }
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    var app: BackgroundSession? = try await d.session("app")
                    let task = try await app!.downloadTask(with: base.appendingPathComponent("a")).taskIdentifier
                    app = nil
                    var gone: BackgroundSession? = try await d.session("uninstalled")
                    _ = try await gone!.downloadTask(with: base.appendingPathComponent("b"))
                    gone = nil
                    let cli = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("c").absoluteString], session: "cli")).transfers[0].id
                    try await eventually("all three to complete") {
                        try await d.client.transfers().transfers.allSatisfy { $0.state == .completed }
                    }
                    // The daemon's hourly pass, a week and a day later.
                    let engine = d.daemon.engine
                    let day: TimeInterval = 86_400
                    _ = try await engine.journal.pruneEvents(engine.configuration.eventRetention, now: Date().addingTimeInterval(8 * day))
                    #expect(try await engine.journal.events(session: "cli", after: 0).isEmpty, "the CLI's window is a week")
                    #expect(try await d.client.transfer(cli).state == .completed, "the transfer stays; only its events went")

                    let back = try await d.session("app")
                    let missed = try await back.missedEvents()
                    #expect(missed.finished[task] != nil, "a week away, the completion is still there: \(missed.summary)")

                    let forgotten = try await d.client.forgetSession("uninstalled")
                    #expect(forgotten.eventsDeleted > 0 && forgotten.cancelled.isEmpty)
                    #expect(try await d.session("uninstalled").missedEvents().isEmpty)

                    // Past the documented limit for a program that never comes back: dropped.
                    _ = try await engine.journal.pruneEvents(engine.configuration.eventRetention, now: Date().addingTimeInterval(91 * day))
                    #expect(try await d.session("app").missedEvents().isEmpty)
                }
            }
        }
    }
}
