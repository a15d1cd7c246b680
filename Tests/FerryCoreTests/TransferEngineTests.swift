import FerryKit
import GRDB
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// The engine against a real origin on loopback and a real SQLite journal: the happy path,
/// naming, queueing and commands.
@Suite struct TransferEngineTests {
    @Test func downloadsIntoDownloadsWithTheRightSHA256() async throws {
        let file = Origin.File(data: Origin.bytes(300_000), contentType: "audio/mpeg")
        try await Origin.run { origin, base in
            origin.serve("/media/song", file)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let created = try await h.get(base.appendingPathComponent("media/song"))
                    let done = try await h.wait(created.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(done.bytesReceived == 300_000)
                    #expect(done.totalBytes == 300_000)
                    // No extension in the URL: it comes from the Content-Type.
                    #expect(done.path == h.library.absolute("Downloads/song.mp3").path)
                    let onDisk = try Data(contentsOf: URL(fileURLWithPath: done.path!))
                    #expect(onDisk.sha256Hex == file.sha256)
                    #expect(!h.partFileExists(created.id))
                    let kinds = try await h.events().map(\.kind)
                    #expect(kinds.first == .created)
                    #expect(kinds.contains(.started))
                    #expect(kinds.last == .completed)
                }
            }
        }
    }

    @Test func hostileContentDispositionStaysInsideTheLibrary() async throws {
        try await Origin.run { origin, base in
            origin.serve("/a", .init(data: Origin.bytes(1000), contentDisposition: #"attachment; filename="../../etc/passwd""#))
            origin.serve("/b", .init(data: Origin.bytes(1000, seed: 2), contentDisposition: #"attachment; filename="..\..\.bashrc""#))
            // U+06DD joins the `/` after it into one Character (found by fuzzing FileNamer).
            origin.serve("/c", .init(data: Origin.bytes(1000, seed: 3), contentDisposition: "attachment; filename*=UTF-8''%DB%9D%2F..%DB%9D%2Fevil.mp3"))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let a = try await h.get(base.appendingPathComponent("a"))
                    let b = try await h.get(base.appendingPathComponent("b"))
                    let c = try await h.get(base.appendingPathComponent("c"))
                    #expect(try await h.wait(a.id, for: .completed).path == h.library.absolute("Downloads/passwd").path)
                    #expect(try await h.wait(b.id, for: .completed).path == h.library.absolute("Downloads/bashrc").path)
                    #expect(try await h.wait(c.id, for: .completed).path == h.library.absolute("Downloads/evil.mp3").path)
                    #expect(h.allFiles().allSatisfy { $0.hasPrefix("library/") || $0.hasPrefix("state/") })
                }
            }
        }
    }

    @Test func sameNameGetsNumberedVariants() async throws {
        try await Origin.run { origin, base in
            for n in 1...3 {
                origin.serve("/\(n)/episode.mp3", .init(data: Origin.bytes(5000, seed: UInt64(n))))
            }
            try await withTemporaryDirectory { home in
                var configuration = TransferEngine.Configuration.fast
                configuration.maxConcurrent = 1
                try await EngineHarness.run(home: home, configuration: configuration) { h in
                    let transfers = try await h.get((1...3).map { base.appendingPathComponent("\($0)/episode.mp3") })
                    var paths: [String] = []
                    for transfer in transfers {
                        paths.append(try await h.wait(transfer.id, for: .completed).path!)
                    }
                    #expect(paths.map { URL(fileURLWithPath: $0).lastPathComponent } == ["episode.mp3", "episode (2).mp3", "episode (3).mp3"])
                }
            }
        }
    }

    @Test func sameURLInTheSameSessionIsNotDownloadedTwice() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(2000)))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let url = base.appendingPathComponent("f")
                    let first = try await h.get(url)
                    try await h.wait(first.id, for: .completed)
                    let again = try await h.get(url)
                    #expect(again.id == first.id)
                    let otherSession = try await h.get(url, session: "other")
                    #expect(otherSession.id != first.id)
                    let forced = try await h.get([url], force: true)[0]
                    #expect(forced.id != first.id)
                    try await h.wait(forced.id, for: .completed)
                    #expect(origin.requests(for: "/f").count == 3)
                }
            }
        }
    }

    @Test func atMostMaxConcurrentRunAndTheRestWaitInOrder() async throws {
        try await Origin.run { origin, base in
            for n in 1...6 {
                origin.serve("/\(n)", .init(data: Origin.bytes(64 * 1024, seed: UInt64(n)), bytesPerSecond: 256 * 1024))
            }
            try await withTemporaryDirectory { home in
                var configuration = TransferEngine.Configuration.fast
                configuration.maxConcurrent = 2
                try await EngineHarness.run(home: home, configuration: configuration) { h in
                    let transfers = try await h.get((1...6).map { base.appendingPathComponent("\($0)") })
                    for transfer in transfers { try await h.wait(transfer.id, for: .completed) }
                    #expect(origin.peakConcurrency == 2)
                    // Started in creation order: a transfer never starts before one created two
                    // or more places earlier (the two slots may start in either order).
                    let starts = try await h.events().filter { $0.kind == .started }.map(\.transferId)
                    #expect(starts.count == 6)
                    for (i, id) in starts.enumerated() {
                        for earlier in starts[..<i] where earlier >= id + 2 {
                            Issue.record("transfer \(id) started after \(earlier) although created earlier: \(starts)")
                        }
                    }
                }
            }
        }
    }

    @Test func fiftyConcurrentTransfersAllComplete() async throws {
        try await Origin.run { origin, base in
            var files: [String: Origin.File] = [:]
            for n in 1...50 {
                let file = Origin.File(data: Origin.bytes(20_000 + n * 997, seed: UInt64(n)))
                files["/\(n).bin"] = file
                origin.serve("/\(n).bin", file)
            }
            try await withTemporaryDirectory { home in
                var configuration = TransferEngine.Configuration.fast
                configuration.maxConcurrent = 50
                try await EngineHarness.run(home: home, configuration: configuration) { h in
                    let transfers = try await h.get((1...50).map { base.appendingPathComponent("\($0).bin") })
                    #expect(Set(transfers.map(\.id)).count == 50)
                    for (n, transfer) in zip(1..., transfers) {
                        let done = try await h.wait(transfer.id, for: .completed)
                        #expect(done.sha256 == files["/\(n).bin"]!.sha256)
                    }
                    let completed = try await h.events().filter { $0.kind == .completed }
                    #expect(completed.count == 50)
                }
            }
        }
    }

    /// Workers finish at the same moment; a live listener still sees each journaled event once,
    /// in order (events once overtook each other on their way to the hub and one was lost).
    @Test(.timeLimit(.minutes(1)))
    func liveListenersMissNoEventOfConcurrentTransfers() async throws {
        try await Origin.run { origin, base in
            for n in 1...200 { origin.serve("/\(n).bin", .init(data: Origin.bytes(4_000 + n, seed: UInt64(n)))) }
            try await withTemporaryDirectory { home in
                var configuration = TransferEngine.Configuration.fast
                configuration.maxConcurrent = 16
                try await EngineHarness.run(home: home, configuration: configuration) { h in
                    let subscription = h.engine.hub.subscribe(session: "test")
                    let transfers = try await h.get((1...200).map { base.appendingPathComponent("\($0).bin") })
                    var live: [Int64] = []
                    var completed = Set<Int64>()
                    // One that fails ends the wait too, so the test says why instead of timing out.
                    var failed: [Int64: String] = [:]
                    for await message in subscription {
                        guard case .event(let event) = message, let seq = event.seq else { continue }
                        live.append(seq)
                        if event.kind == .completed { completed.insert(event.transferId) }
                        if event.kind == .failed { failed[event.transferId] = event.error?.message ?? "failed" }
                        if completed.count + failed.count == transfers.count { break }
                    }
                    #expect(failed.isEmpty, "\(failed)")
                    let journaled = try await h.events().compactMap(\.seq).filter { $0 <= live.last ?? 0 }
                    #expect(live == journaled)
                }
            }
        }
    }

    @Test func cancelStopsAndDeletesThePartFile() async throws {
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/slow", .init(data: Origin.bytes(2_000_000)))
            origin.script("/slow", [.holdAfter(100_000, gate)])  // until cancelled
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("slow"))
                    try await h.wait(t.id, bytes: 100_000)
                    let cancelled = try await h.engine.cancel(t.id)
                    #expect(cancelled.state == .cancelled)
                    try await eventually("the part file to go") { !h.partFileExists(t.id) }
                    #expect(h.allFiles().filter { $0.hasPrefix("library/Downloads") }.isEmpty)
                    await #expect(throws: FerryError.self) { try await h.engine.resume(t.id) }
                }
            }
        }
    }

    @Test func removeWithDeleteFileDeletesOnlyTheLibraryFile() async throws {
        try await Origin.run { origin, base in
            origin.serve("/x.bin", .init(data: Origin.bytes(1000)))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("x.bin"))
                    let done = try await h.wait(t.id, for: .completed)
                    try await h.engine.remove(t.id, deleteFile: true)
                    #expect(!FileManager.default.fileExists(atPath: done.path!))
                    await #expect(throws: FerryError.self) { try await h.engine.transfer(t.id) }
                    #expect(try await h.events().last?.kind == .removed)
                }
            }
        }
    }

    /// A pause answers once the worker has let go: what it reports is on disk and durable, and
    /// a resume right after it starts at once. A cancel answers with the part file gone. (Each
    /// response is held at 300,000 bytes until its command has answered.)
    @Test func pauseAndCancelAnswerOnceTheWorkerHasStopped() async throws {
        let (gateA, gateB) = (Origin.Gate(), Origin.Gate())
        try await Origin.run { origin, base in
            let fileA = Origin.File(data: Origin.bytes(4_000_000), etag: "\"a\"", bytesPerSecond: 2_000_000)
            origin.serve("/a", fileA)
            origin.serve("/b", .init(data: Origin.bytes(4_000_000, seed: 2), bytesPerSecond: 2_000_000))
            origin.script("/a", [.holdAfter(300_000, gateA)])
            origin.script("/b", [.holdAfter(300_000, gateB)])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let a = try await h.get(base.appendingPathComponent("a"), connections: 1)
                    try await h.wait(a.id, bytes: 300_000)
                    let paused = try await h.engine.pause(a.id)
                    #expect(await !h.engine.isHeld(a.id))
                    let journaled = try await h.journal.transfer(id: a.id)!.durableBytes
                    let onDisk = try FileManager.default.attributesOfItem(atPath: h.library.partURL(for: a.id).path)[.size] as? Int64
                    #expect(paused.bytesReceived == journaled)
                    #expect(paused.bytesReceived == onDisk)
                    #expect(paused.bytesReceived == 300_000)
                    gateA.open()
                    _ = try await h.engine.resume(a.id)
                    #expect(await h.engine.isHeld(a.id))  // Taken by the scheduler within the resume.

                    let b = try await h.get(base.appendingPathComponent("b"), connections: 1)
                    try await h.wait(b.id, bytes: 300_000)
                    _ = try await h.engine.cancel(b.id)
                    #expect(await !h.engine.isHeld(b.id))
                    #expect(!h.partFileExists(b.id))
                    gateB.open()
                    #expect(try await h.wait(a.id, for: .completed).sha256 == fileA.sha256)
                }
            }
        }
    }

    /// A pause or cancel is journaled after the worker's last checkpoint, so its event carries
    /// every byte on disk: a paused event says where a resume starts. Checkpoints are rare here
    /// (every 10 s), so only the stop's own checkpoint makes the held bytes durable.
    @Test func pausedAndCancelledEventsCarryEveryByteOnDisk() async throws {
        let held = 300_000
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            let a = Origin.File(data: Origin.bytes(1_000_000, seed: 1), etag: "\"a\"")
            origin.serve("/a", a)
            origin.serve("/b", .init(data: Origin.bytes(1_000_000, seed: 2), etag: "\"b\""))
            origin.script("/a", [.holdAfter(held, gate)])
            origin.script("/b", [.holdAfter(held, gate)])
            var configuration = TransferEngine.Configuration.fast
            configuration.checkpointInterval = .seconds(10)
            configuration.checkpointMaxInterval = .seconds(10)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: configuration) { h in
                    let (ta, tb) = (try await h.get(base.appendingPathComponent("a")), try await h.get(base.appendingPathComponent("b")))
                    try await h.wait(ta.id, bytes: Int64(held))
                    try await h.wait(tb.id, bytes: Int64(held))
                    let paused = try await h.engine.pause(ta.id)
                    _ = try await h.engine.cancel(tb.id, keepingResumeData: true)
                    #expect(paused.bytesReceived == Int64(held))

                    let events = try await h.events()
                    for (id, kind) in [(ta.id, TransferEvent.Kind.paused), (tb.id, .cancelled)] {
                        let own = events.filter { $0.transferId == id }
                        #expect(own.last?.kind == kind, "nothing journaled after the \(kind): \(own.map(\.kind))")
                        #expect(own.last?.bytesReceived == Int64(held), "\(own.map { ($0.kind, $0.bytesReceived) })")
                    }
                    let resumeData = try await h.engine.resumeData(for: tb.id)
                    #expect(resumeData.durableBytes == Int64(held))

                    _ = try await h.engine.resume(ta.id)
                    #expect(try await h.wait(ta.id, for: .completed).sha256 == a.sha256)
                    let resumed = try await h.events().first { $0.transferId == ta.id && $0.kind == .resumed }
                    #expect(resumed?.offset == Int64(held))
                }
            }
        }
    }

    /// A pause stops the worker first; when the journal then refuses the change, the transfer,
    /// still running in the journal, goes back to the queue and continues from its bytes on
    /// disk instead of standing still until the next daemon start.
    @Test func aPauseTheJournalRefusesLeavesTheTransferGoingOn() async throws {
        let file = Origin.File(data: Origin.bytes(1_000_000))
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/a", file)
            origin.script("/a", [.holdAfter(300_000, gate)])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("a"))
                    try await h.wait(t.id, bytes: 300_000)
                    try await Self.refusePauses(h)
                    await #expect(throws: (any Error).self) { try await h.engine.pause(t.id) }
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    let events = try await h.events()
                    #expect(!events.contains { $0.kind == .paused })
                    #expect(events.first { $0.kind == .resumed }?.offset == 300_000)
                }
            }
        }
    }

    /// The same for a transfer waiting to retry: its retry timer is back, and it retries.
    @Test func aPauseTheJournalRefusesLeavesARetryWaiting() async throws {
        let file = Origin.File(data: Origin.bytes(10_000))
        let clock = ManualClock()
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.status(503, retryAfter: "120")])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, clock: clock) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    try await h.wait(t.id, for: .waiting)
                    try await clock.waitForSleepers()
                    try await Self.refusePauses(h)
                    await #expect(throws: (any Error).self) { try await h.engine.pause(t.id) }
                    try #require(await h.engine.isHeld(t.id), "its retry timer again")
                    try await clock.waitForSleepers()
                    clock.advance(by: .seconds(120))
                    #expect(try await h.wait(t.id, for: .completed).sha256 == file.sha256)
                }
            }
        }
    }

    /// A trigger on the journal's connection that refuses every pause, as a failing journal would.
    private static func refusePauses(_ h: EngineHarness) async throws {
        try await h.journal.writer.writeWithoutTransaction { db in
            try db.execute(sql: """
                CREATE TEMP TRIGGER refusePause BEFORE UPDATE OF state ON transfer WHEN NEW.state = 'paused'
                BEGIN SELECT RAISE(ABORT, 'the journal refuses this pause'); END
                """)
        }
    }

    @Test func pauseResumeAndCancelRacesLeaveAConsistentState() async throws {
        try await Origin.run { origin, base in
            var files: [Origin.File] = []
            for n in 1...8 {
                let file = Origin.File(data: Origin.bytes(400_000, seed: UInt64(n)), bytesPerSecond: 2_000_000)
                files.append(file)
                origin.serve("/r\(n)", file)
            }
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let transfers = try await h.get((1...8).map { base.appendingPathComponent("r\($0)") })
                    var generator = SystemRandomNumberGenerator()
                    // Hammer them with commands while they download.
                    for _ in 0..<120 {
                        let t = transfers.randomElement(using: &generator)!
                        switch Int.random(in: 0..<10, using: &generator) {
                        case 0: _ = try? await h.engine.cancel(t.id)
                        case 1...4: _ = try? await h.engine.pause(t.id)
                        default: _ = try? await h.engine.resume(t.id)
                        }
                        try await Task.sleep(for: .milliseconds(Int.random(in: 0...5, using: &generator)))
                    }
                    for (file, t) in zip(files, transfers) {
                        let now = try await h.engine.transfer(t.id)
                        if now.state == .cancelled {
                            try await eventually("cancelled part file deleted") { !h.partFileExists(t.id) }
                            continue
                        }
                        if now.state != .completed { _ = try? await h.engine.resume(t.id) }
                        let done = try await h.wait(t.id, for: .completed)
                        #expect(done.sha256 == file.sha256, "transfer \(t.id)")
                        #expect(!h.partFileExists(t.id))
                    }
                    // One file per completed transfer; no stray part files.
                    let completed = try await h.engine.list(states: [.completed]).transfers.count
                    #expect(h.allFiles().filter { $0.hasPrefix("library/Downloads/") }.count == completed)
                    #expect(h.allFiles().filter { $0.hasPrefix("library/.partial/") }.isEmpty)
                }
            }
        }
    }

    @Test func commandsOnUnknownOrFinishedTransfersFailClearly() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(100)))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let error = await #expect(throws: FerryError.self) { try await h.engine.pause(999) }
                    #expect(error?.code == .notFound)
                    let t = try await h.get(base.appendingPathComponent("f"))
                    try await h.wait(t.id, for: .completed)
                    let pauseError = await #expect(throws: FerryError.self) { try await h.engine.pause(t.id) }
                    #expect(pauseError?.code == .invalidState)
                    #expect(pauseError?.message.contains("completed") == true)
                }
            }
        }
    }
}
