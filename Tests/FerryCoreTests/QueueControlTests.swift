import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// The queue as a user steers it, with the real engine and origin: priorities and moves decide
/// what starts next while one slot is busy; everything paused and resumed with one command each.
@Suite struct QueueControlTests {
    /// One slot, held by a first download until the gate opens; then the order in which the
    /// others reach the origin.
    @Test func priorityAndMovesDecideWhatStartsNext() async throws {
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/hold", .init(data: Origin.bytes(300_000)))
            origin.script("/hold", [.holdAfter(100_000, gate)])
            for n in 1...5 { origin.serve("/\(n)", .init(data: Origin.bytes(20_000, seed: UInt64(n)))) }
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    _ = try await h.engine.updateOptions(session: nil, .init(set: TransferOptions(maxConcurrent: 1)))
                    let hold = try await h.get(base.appendingPathComponent("hold"))
                    try await h.wait(hold.id, bytes: 100_000)
                    var ids: [Int: Int64] = [:]
                    for n in 1...5 {
                        let priority: TransferPriority = n == 5 ? .high : n == 1 ? .low : .normal
                        ids[n] = try await h.engine.enqueue(.init(urls: [base.appendingPathComponent("\(n)")], session: "test", priority: priority))[0].id
                    }
                    // 4 ahead of everything (raised to high, before 5); 2 behind everything.
                    let moved = try await h.engine.update(ids[4]!, TransferUpdate(position: .first))
                    #expect(moved.priority == .high)
                    #expect(try await h.engine.update(ids[2]!, TransferUpdate(position: .last)).priority == .low)
                    gate.open()
                    for n in 1...5 { try await h.wait(ids[n]!, for: .completed) }
                    let order = origin.requests.map(\.path).filter { $0 != "/hold" }
                    #expect(order == ["/4", "/5", "/3", "/1", "/2"])
                    // A finished transfer has no place in the queue.
                    await #expect(throws: FerryError.self) { try await h.engine.update(ids[1]!, TransferUpdate(priority: .high)) }
                }
            }
        }
    }

    /// Pause everything (one session, then all), with running and queued transfers; each keeps
    /// its bytes, and resuming everything finishes them all.
    @Test func pauseAllAndResumeAll() async throws {
        let gates = (0..<4).map { _ in Origin.Gate() }
        let files = (0..<4).map { Origin.File(data: Origin.bytes(400_000, seed: UInt64($0 + 10))) }
        try await Origin.run { origin, base in
            for n in 0..<4 {
                origin.serve("/\(n)", files[n])
                origin.script("/\(n)", [.holdAfter(150_000, gates[n])])
            }
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    _ = try await h.engine.updateOptions(session: nil, .init(set: TransferOptions(maxConcurrent: 3)))
                    var transfers: [Transfer] = []
                    for n in 0..<4 {
                        let session = n == 3 ? "other" : "test"
                        transfers += try await h.engine.enqueue(
                            .init(urls: [base.appendingPathComponent("\(n)")], session: session, options: TransferOptions(connections: 1))
                        )
                    }
                    for t in transfers.prefix(3) { try await h.wait(t.id, bytes: 150_000) }
                    let other = try await h.engine.pauseAll(session: "other")
                    #expect(other.map(\.id) == [transfers[3].id])
                    let paused = try await h.engine.pauseAll(session: nil)
                    #expect(paused.map(\.id) == transfers.prefix(3).map(\.id))
                    #expect(paused.allSatisfy { $0.state == .paused && $0.bytesReceived == 150_000 })
                    #expect(try await h.engine.pauseAll(session: nil).isEmpty, "nothing left to pause")
                    for gate in gates { gate.open() }
                    let resumed = try await h.engine.resumeAll(session: nil)
                    #expect(resumed.count == 4)
                    for (n, t) in transfers.enumerated() {
                        #expect(try await h.wait(t.id, for: .completed).sha256 == files[n].sha256)
                    }
                    // The three that had bytes continued from them.
                    let ranges = origin.requests.compactMap(\.range)
                    #expect(ranges.filter { $0 == "bytes=150000-" }.count == 3, "\(ranges)")
                }
            }
        }
    }

    /// A new URL for a paused transfer (an expired signed link): the same file there keeps the
    /// bytes on disk (a Range from them); another file starts over and says why.
    @Test(arguments: [false, true])
    func aNewURLKeepsTheBytesOnlyForTheSameFile(changed: Bool) async throws {
        let file = Origin.File(data: Origin.bytes(500_000))
        let other = Origin.File(data: Origin.bytes(450_000, seed: 3), etag: "\"v2\"")
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/signed-1", file)
            origin.script("/signed-1", [.holdAfter(200_000, gate)])
            origin.serve("/signed-2", changed ? other : file)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    let t = try await h.get(base.appendingPathComponent("signed-1"), connections: 1)
                    try await h.wait(t.id, bytes: 200_000)
                    _ = try await h.engine.pause(t.id)
                    gate.open()
                    origin.script("/signed-1", [.status(403)])  // expired
                    let resumed = try await h.engine.resume(t.id, url: base.appendingPathComponent("signed-2"))
                    #expect(resumed.url == base.appendingPathComponent("signed-2").absoluteString)
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == (changed ? other : file).sha256)
                    #expect(origin.requests(for: "/signed-2").first?.range == "bytes=200000-")
                    let restarted = try await h.events().first { $0.kind == .restarted }
                    if changed {
                        #expect(restarted?.reason?.contains("changed") == true, "\(String(describing: restarted?.reason))")
                    } else {
                        #expect(restarted == nil)
                    }
                }
            }
        }
    }

    /// The history goes in one command: completed and cancelled transfers, with a `removed`
    /// event each; failed and paused ones stay, and so do the files.
    @Test func removingTheFinishedKeepsTheRest() async throws {
        try await Origin.run { origin, base in
            origin.serve("/done", .init(data: Origin.bytes(10_000)))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    let done = try await h.get(base.appendingPathComponent("done"))
                    let completed = try await h.wait(done.id, for: .completed)
                    let failed = try await h.get(base.appendingPathComponent("missing"))
                    try await h.wait(failed.id, for: .failed)
                    let later = try await h.engine.enqueue(.init(urls: [base.appendingPathComponent("later")], session: "test", options: .init(startAfter: .distantFuture)))[0]
                    let cancelled = try await h.engine.enqueue(.init(urls: [base.appendingPathComponent("x")], session: "test", options: .init(startAfter: .distantFuture)))[0]
                    _ = try await h.engine.cancel(cancelled.id)
                    let paused = try await h.engine.pause(later.id)
                    #expect(try await h.engine.removeFinished(session: nil) == [done.id, cancelled.id])
                    #expect(try await h.journal.transfers().map(\.transferId) == [failed.id, paused.id])
                    #expect(FileManager.default.fileExists(atPath: completed.path!))
                    let removed = try await h.events().filter { $0.kind == .removed }.map(\.transferId)
                    #expect(removed == [done.id, cancelled.id])
                }
            }
        }
    }
}
