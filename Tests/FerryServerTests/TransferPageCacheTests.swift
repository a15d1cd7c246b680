import FerryCore
import FerryKit
import FerryTestSupport
import Foundation
import NIOCore
import Synchronization
import Testing

@testable import FerryServer

/// `GET /v1/transfers` answered again from what was written while nothing changed: every
/// command that changes a listed transfer shows in the next list at once (with an event or
/// without), running transfers are never kept, and a member's view is the member's.
@Suite struct TransferPageCacheTests {
    @Test func anAnswerIsKeptForItsMarkAndItsSecondUnlessATransferRunsOrIsDone() {
        let cache = TransferPageCache()
        let key = TransferPageCache.Key(query: "limit=100&order=desc", viewer: nil)
        let t0 = ContinuousClock.now
        let mark = JournalMark(writes: 40)
        func list(_ state: TransferState) -> TransferList {
            let date = Date(timeIntervalSince1970: 1_700_000_000)
            return TransferList(transfers: [Transfer(id: 1, url: "http://x/a", session: "cli", state: state, createdAt: date, updatedAt: date)], lastEventSeq: 7)
        }
        cache.keep(ByteBuffer(string: "queued"), of: list(.queued), at: mark, for: key, now: t0)
        #expect(cache.body(for: key, at: mark, now: t0 + .milliseconds(900)) == ByteBuffer(string: "queued"))
        #expect(cache.body(for: key, at: JournalMark(writes: 41), now: t0) == nil, "a transfer or an event written since")
        #expect(cache.body(for: key, at: mark, now: t0 + .seconds(1)) == nil, "a second old")
        #expect(cache.body(for: .init(query: key.query, viewer: "bob"), at: mark, now: t0) == nil, "another viewer")
        cache.keep(ByteBuffer(string: "running"), of: list(.running), at: JournalMark(writes: 50), for: key, now: t0)
        #expect(cache.body(for: key, at: JournalMark(writes: 50), now: t0) == nil, "a running transfer's bytes move")
        cache.keep(ByteBuffer(string: "completed"), of: list(.completed), at: JournalMark(writes: 51), for: key, now: t0)
        #expect(cache.body(for: key, at: JournalMark(writes: 51), now: t0) == nil, "a completed transfer's file may go")
    }

    @Test func fiftyAskingTogetherMakeOneReadAndAnotherMarkItsOwn() async throws {
        // Kept for a minute here: a loaded machine may take more than the daemon's second
        // between the keeping and the asking again.
        let cache = TransferPageCache(lifetime: .seconds(60))
        let key = TransferPageCache.Key(query: "limit=100&order=desc", viewer: nil)
        final class Count: Sendable { let value = Mutex(0) }
        let reads = Count()
        // Each asker makes its read just before it asks; a read waits until all have asked.
        let askers = Count()
        @Sendable func read(_ state: TransferState, of crowd: Int = 1) -> @Sendable () async throws -> (ByteBuffer, TransferList) {
            askers.value.withLock { $0 += 1 }
            return {
                reads.value.withLock { $0 += 1 }
                while askers.value.withLock({ $0 }) % crowd != 0 { try await Task.sleep(for: .milliseconds(5)) }
                try await Task.sleep(for: .milliseconds(50))  // the last asker's few steps into page()
                let date = Date(timeIntervalSince1970: 1_700_000_000)
                return (ByteBuffer(string: state.rawValue), TransferList(transfers: [Transfer(id: 1, url: "http://x/a", session: "cli", state: state, createdAt: date, updatedAt: date)], lastEventSeq: 7))
            }
        }
        func fifty(at mark: JournalMark, _ state: TransferState) async throws -> [ByteBuffer] {
            try await withThrowingTaskGroup(of: ByteBuffer.self) { group in
                for _ in 0..<50 { group.addTask { try await cache.page(for: key, at: mark, read: read(state, of: 50)) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        // A running transfer's page is never kept, but those asking while it is read share it.
        #expect(try await fifty(at: JournalMark(writes: 1), .running) == Array(repeating: ByteBuffer(string: "running"), count: 50))
        #expect(reads.value.withLock { $0 } == 1)
        _ = try await fifty(at: JournalMark(writes: 1), .running)
        #expect(reads.value.withLock { $0 } == 2, "read again once the first read was answered")
        _ = try await cache.page(for: key, at: JournalMark(writes: 2), read: read(.queued))
        #expect(reads.value.withLock { $0 } == 3, "another mark")
        _ = try await fifty(at: JournalMark(writes: 2), .queued)
        #expect(reads.value.withLock { $0 } == 3, "kept")
    }

    @Test func everyCommandShowsInTheNextListAtOnce() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let later = TransferOptions(startAfter: Date().addingTimeInterval(86_400))
                let created = try await d.client.createTransfers(
                    CreateTransfersRequest(urls: ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b", "http://127.0.0.1:9/c"], session: "cli", options: later)
                ).transfers.map(\.id)
                func page() async throws -> [Transfer] { try await d.client.transfers(limit: 100, newestFirst: true).transfers }
                func listed(_ id: Int64) async throws -> Transfer? { try await page().first { $0.id == id } }
                #expect(try await page().map(\.id) == created.reversed())
                #expect(try await page().map(\.id) == created.reversed(), "the same answer again")

                // Without an event: a new priority, a new place in the queue.
                _ = try await d.client.update(created[1], TransferUpdate(priority: .high))
                #expect(try await listed(created[1])?.priority == .high)
                _ = try await d.client.update(created[1], TransferUpdate(priority: .low))
                #expect(try await listed(created[1])?.priority == .low)
                // With events.
                _ = try await d.client.pause(created[0])
                #expect(try await listed(created[0])?.state == .paused)
                _ = try await d.client.resume(created[0])
                #expect(try await listed(created[0])?.state != .paused)
                _ = try await d.client.cancel(created[2])
                #expect(try await listed(created[2])?.state == .cancelled)
                try await d.client.remove(created[2])
                #expect(try await page().map(\.id) == [created[1], created[0]])
                let more = try await d.client.createTransfers(CreateTransfersRequest(urls: ["http://127.0.0.1:9/d"], session: "cli", options: later))
                #expect(try await page().first?.id == more.transfers[0].id)
            }
        }
    }
}
