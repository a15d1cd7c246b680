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
}
