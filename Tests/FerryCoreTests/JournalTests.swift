import FerryKit
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryCore

@Suite struct JournalTests {
    private func draft(_ url: String = "http://127.0.0.1/a", session: String = "s") -> TransferRecord {
        TransferRecord(session: session, url: url, folder: "Downloads")
    }

    /// Live listeners get every journaled event in `seq` order, however many writers race
    /// (an event stream skips numbers it has passed, so an overtaken event would be lost).
    @Test func committedEventsArriveInSequenceOrder() async throws {
        try await withTemporaryDirectory { folder in
            let journal = try Journal.open(at: folder.appendingPathComponent("journal.sqlite"))
            let seen = Mutex<[Int64]>([])
            journal.onCommit { event in seen.withLock { $0.append(event.seq ?? -1) } }
            let (record, _) = try await journal.createTransfer(draft(), reuseExisting: false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<16 {
                    group.addTask {
                        for n in 0..<25 {
                            if n % 2 == 0 {
                                _ = try await journal.append(TransferEvent(kind: .progress, transferId: record.transferId, session: "s"))
                            } else {
                                try await journal.update(id: record.transferId) { record in
                                    record.durableBytes = Int64(writer * 100 + n)
                                    return record.event(.progress)
                                }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let order = seen.withLock { $0 }
            #expect(order == Array(1...Int64(1 + 16 * 25)))
        }
    }

    @Test func createJournalsACreatedEventAndReusesTheSameURL() async throws {
        let journal = try Journal.inMemory()
        let (first, event) = try await journal.createTransfer(draft(), reuseExisting: true)
        #expect(first.transferId == 1)
        #expect(event?.kind == .created)
        #expect(event?.seq == 1)
        let (again, none) = try await journal.createTransfer(draft(), reuseExisting: true)
        #expect(again.transferId == first.transferId)
        #expect(none == nil)
        let (forced, _) = try await journal.createTransfer(draft(), reuseExisting: false)
        #expect(forced.transferId == 2)
        // A cancelled transfer does not count as "already asked for".
        try await journal.update(id: 1) { record in
            record.state = .cancelled
            return nil
        }
        try await journal.update(id: 2) { record in
            record.state = .cancelled
            return nil
        }
        let (fresh, _) = try await journal.createTransfer(draft(), reuseExisting: true)
        #expect(fresh.transferId == 3)
    }

    @Test func aThrowingUpdateWritesNothing() async throws {
        let journal = try Journal.inMemory()
        let id = try await journal.createTransfer(draft(), reuseExisting: false).record.transferId
        await #expect(throws: FerryError.self) {
            try await journal.update(id: id) { record in
                record.state = .paused
                record.durableBytes = 99
                throw FerryError.invalidState("no")
            }
        }
        let record = try await journal.transfer(id: id)
        #expect(record?.state == .queued)
        #expect(record?.durableBytes == 0)
        #expect(try await journal.events(session: "s", after: 0).count == 1)
    }

    @Test func eventsArePerSessionInOrderAndPrunedByAcknowledgement() async throws {
        let journal = try Journal.inMemory()
        let a = try await journal.createTransfer(draft(session: "a"), reuseExisting: false).record
        let b = try await journal.createTransfer(draft(session: "b"), reuseExisting: false).record
        for kind in [TransferEvent.Kind.started, .progress, .completed] {
            _ = try await journal.append(a.event(kind))
            _ = try await journal.append(b.event(kind))
        }
        let eventsA = try await journal.events(session: "a", after: 0)
        #expect(eventsA.map(\.kind) == [.created, .started, .progress, .completed])
        #expect(eventsA.allSatisfy { $0.session == "a" && $0.transferId == a.transferId })
        #expect(eventsA.map { $0.seq! } == [1, 3, 5, 7])
        #expect(try await journal.events(session: "a", after: 3).map { $0.seq! } == [5, 7])

        try await journal.acknowledge(session: "a", through: 5)
        #expect(try await journal.acknowledgedSeq(session: "a") == 5)
        #expect(try await journal.events(session: "a", after: 0).map { $0.seq! } == [7])
        // Other sessions keep theirs; acknowledging never goes backwards.
        #expect(try await journal.events(session: "b", after: 0).count == 4)
        try await journal.acknowledge(session: "a", through: 2)
        #expect(try await journal.acknowledgedSeq(session: "a") == 5)
        // Sequence numbers are never reused after pruning.
        try await journal.acknowledge(session: "a", through: 8)
        try await journal.acknowledge(session: "b", through: 8)
        #expect(try await journal.lastEventSeq() == 8)
        let next = try await journal.append(a.event(.paused))
        #expect(next.seq == 9)
    }

    @Test func aJournalFileReopensWithItsData() async throws {
        try await withTemporaryDirectory { folder in
            let url = folder.appendingPathComponent("state/journal.sqlite")
            do {
                let journal = try Journal.open(at: url)
                _ = try await journal.createTransfer(draft(), reuseExisting: false)
            }
            let reopened = try Journal.open(at: url)
            #expect(try await reopened.transfers().count == 1)
            #expect(try await reopened.counts() == [.queued: 1])
        }
    }
}
