import FerryCore
import FerryKit
import Foundation
import NIOCore
import Synchronization

/// The last answers of `GET /v1/transfers`, written once and sent again while the journal's
/// mark (``TransferJournal/mark()``: every write of a transfer, and the newest event) is the
/// one they were read at, for at most a second. Only pages that nothing but a journal write can
/// change are kept: none with a running transfer (its bytes move between writes) or a completed
/// one (its file may be deleted behind Ferry's back: the list says so at once). Fifty browsers
/// polling a queue cost one read of it, not fifty (bench scenario 12), and so do fifty arriving
/// together as a page expires: the first reads, the others wait for its answer. A cluster's
/// journal has no mark: every list is read.
final class TransferPageCache: Sendable {
    /// One list as one viewer sees it: the query as sent, and the member it is shown to (nil:
    /// whoever sees everything).
    struct Key: Hashable, Sendable {
        var query: String
        var viewer: String?
    }

    private struct Entry {
        var mark: JournalMark
        var body: ByteBuffer
        var at: ContinuousClock.Instant
    }

    /// How long an answer is kept: a second in the daemon.
    let lifetime: Duration
    /// Distinct lists kept (each one page).
    static let capacity = 32
    private let entries = Mutex<[Key: Entry]>([:])

    init(lifetime: Duration = .seconds(1)) {
        self.lifetime = lifetime
    }
    /// Lists being read now, by the mark they were asked at.
    private let reading = Mutex<[Key: (mark: JournalMark, task: Task<ByteBuffer, any Error>)]>([:])

    /// The answer for `key` at `mark`: the one kept, the one another request is reading at the
    /// same mark, or `read()`'s (kept when it may be).
    func page(for key: Key, at mark: JournalMark, read: @escaping @Sendable () async throws -> (ByteBuffer, TransferList)) async throws -> ByteBuffer {
        if let body = body(for: key, at: mark) { return body }
        let task = reading.withLock { reading in
            if let underway = reading[key], underway.mark == mark { return underway.task }
            let task = Task {
                defer { self.reading.withLock { if $0[key]?.mark == mark { $0[key] = nil } } }
                let (body, list) = try await read()
                self.keep(body, of: list, at: mark, for: key)
                return body
            }
            reading[key] = (mark, task)
            return task
        }
        return try await task.value
    }

    /// The answer kept for `key`, if it was read at `mark` and is fresh.
    func body(for key: Key, at mark: JournalMark, now: ContinuousClock.Instant = .now) -> ByteBuffer? {
        entries.withLock { entries in
            guard let entry = entries[key], entry.mark == mark, now - entry.at < lifetime else { return nil }
            return entry.body
        }
    }

    /// Keeps the answer to `list`, read at `mark` (taken before it was read), unless a transfer
    /// in it is running or completed.
    func keep(_ body: ByteBuffer, of list: TransferList, at mark: JournalMark, for key: Key, now: ContinuousClock.Instant = .now) {
        guard !list.transfers.contains(where: { $0.state == .running || $0.state == .completed }) else { return }
        entries.withLock { entries in
            if entries.count >= Self.capacity, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(mark: mark, body: body, at: now)
        }
    }
}
