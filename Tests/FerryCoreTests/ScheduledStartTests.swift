import FerryKit
import Foundation
import Testing

@testable import FerryCore

/// Transfers with a start time (`ferry get --at`): they wait apart from the queue, one timer
/// for the earliest, and join the queue at their place when due.
@Suite struct ScheduledStartTests {
    typealias Control = TransferControl
    typealias Entry = TransferControl.Entry
    static let now = Date(timeIntervalSince1970: 1_000_000)

    static func starts(_ actions: [Control.Action]) -> [Int64] {
        actions.compactMap { if case .startWorker(let id, _) = $0 { id } else { nil } }
    }

    static func enqueued(_ transfers: [(Int64, Entry)]) -> Control.Input {
        .enqueued(transfers.map { (id: $0.0, entry: $0.1) })
    }

    static func entry(at date: Date?, priority: Int = 0) -> Entry {
        var entry = Entry(state: .queued, session: "s", startAfter: date)
        entry.priority = priority
        return entry
    }

    @Test func dueTransfersStartInQueueOrderNotByTime() throws {
        var control = Control(limits: .init(daemon: 2))
        let early = Self.now.addingTimeInterval(10), late = Self.now.addingTimeInterval(20)
        let actions = try control.handle(Self.enqueued([(1, Self.entry(at: late)), (2, Self.entry(at: early)), (3, Self.entry(at: late, priority: 1))]), now: Self.now)
        #expect(actions == [.armScheduleTimer(early)])
        #expect(control.queued == 3)
        // Only 2 is due: it starts, and the timer moves on to the next start time.
        let first = try control.handle(.scheduleDue, now: early)
        #expect(Self.starts(first) == [2])
        #expect(first.contains(.armScheduleTimer(late)))
        // Both due at once: the higher priority first, whatever their times.
        _ = try control.handle(.workerEnded(2, worker: control.entry(2)!.worker!, .completed(path: nil, sha256: nil)), now: early)
        let second = try control.handle(.scheduleDue, now: late)
        #expect(Self.starts(second) == [3, 1])
        #expect(!second.contains { if case .armScheduleTimer(_?) = $0 { true } else { false } }, "no start time is left")
    }

    @Test func aReadyTransferIsNotHeldBackByThoseWaitingForTheirTime() throws {
        var control = Control(limits: .init(daemon: 1))
        let tomorrow = Self.now.addingTimeInterval(86_400)
        // Half a million would be the queue's size; 200,000 in batches keeps the test quick.
        for batch in 0..<20 {
            let ids = (Int64(batch) * 10_000 + 1)...(Int64(batch + 1) * 10_000)
            _ = try control.handle(Self.enqueued(ids.map { (Int64($0), Self.entry(at: tomorrow)) }), now: Self.now)
        }
        #expect(control.queued == 200_000)
        let ready = try control.handle(Self.enqueued([(300_000, Self.entry(at: nil))]), now: Self.now)
        #expect(Self.starts(ready) == [Int64(300_000)])
        #expect(control.entry(150_000)?.state == .queued && control.entry(150_000)?.worker == nil)
    }

    @Test func theyJoinTheQueueAtTheirPlaceAmongThoseAlreadyThere() throws {
        var control = Control(limits: .init(daemon: 1))
        // 1 runs, 5 and 6 wait in the queue; 2..4 wait for their times.
        _ = try control.handle(Self.enqueued([(1, Self.entry(at: nil))]), now: Self.now)
        let soon = Self.now.addingTimeInterval(5)
        _ = try control.handle(Self.enqueued([(2, Self.entry(at: soon)), (3, Self.entry(at: soon)), (4, Self.entry(at: Self.now.addingTimeInterval(1)))]), now: Self.now)
        _ = try control.handle(Self.enqueued([(5, Self.entry(at: nil)), (6, Self.entry(at: nil))]), now: Self.now)
        _ = try control.handle(.scheduleDue, now: soon)
        var order: [Int64] = []
        var running: Int64 = 1
        for _ in 0..<5 {
            let next = try control.handle(.workerEnded(running, worker: control.entry(running)!.worker!, .completed(path: nil, sha256: nil)), now: soon)
            running = try #require(Self.starts(next).first)
            order.append(running)
        }
        #expect(order == [2, 3, 4, 5, 6])
    }

    @Test func commandsOnAWaitingTransferTakeItOutOrMoveIt() throws {
        var control = Control(limits: .init(daemon: 4))
        let later = Self.now.addingTimeInterval(60)
        _ = try control.handle(Self.enqueued([(1, Self.entry(at: later)), (2, Self.entry(at: later)), (3, Self.entry(at: later))]), now: Self.now)
        _ = try control.handle(.cancel(1, keepingPartFile: false), now: Self.now)
        _ = try control.handle(.pause(2), now: Self.now)
        _ = try control.handle(.reorder(3, priority: TransferPriority.high.rank, position: nil), now: Self.now)
        #expect(control.queued == 1)
        #expect(Self.starts(try control.handle(.scheduleDue, now: Self.now)).isEmpty, "moved, 3 still waits for its time")
        #expect(Self.starts(try control.handle(.scheduleDue, now: later)) == [3])
        // Resumed after its time: it starts at once.
        #expect(Self.starts(try control.handle(.resume(2), now: later)) == [2])
    }
}
