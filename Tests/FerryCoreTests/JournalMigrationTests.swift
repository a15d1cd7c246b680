import FerryKit
import FerryTestSupport
import Foundation
import GRDB
import Testing

@testable import FerryCore

/// A journal written by an earlier Ferry opens in this one with nothing lost.
@Suite struct JournalMigrationTests {
    /// v5: a transfer that was `retrying` (and its events) is `waiting`, counting its resource
    /// timeout from its last change; the others are untouched.
    @Test func retryingTransfersAndEventsBecomeWaiting() async throws {
        try await withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("journal.sqlite")
            let updated = "2026-11-20 10:00:00.000"
            do {
                let queue = try DatabaseQueue(path: path.path)
                try SQLiteTables.migrator([.transfers]).migrate(queue, upTo: "v4: the boot the daemon last ran in")
                try await queue.write { db in
                    for (id, state) in [(1, "retrying"), (2, "paused")] {
                        try db.execute(
                            sql: """
                                INSERT INTO transfer (id, session, url, state, folder, durableBytes, attempts, failures, retryAt, keepsPartFile, createdAt, updatedAt)
                                VALUES (?, 's', 'http://127.0.0.1/f', ?, 'Downloads', 10, 3, 3, ?, 0, ?, ?)
                                """,
                            arguments: [id, state, "2026-11-20 10:01:00.000", updated, updated])
                    }
                    let payload = #"{"attempt":3,"date":"2026-11-20T10:00:00Z","kind":"retrying","reason":"The server answered 503.","session":"s","transferId":1}"#
                    try db.execute(
                        sql: "INSERT INTO event (session, transferId, kind, payload, createdAt) VALUES ('s', 1, 'retrying', ?, ?)",
                        arguments: [payload, updated])
                }
                // Closed before the journal opens the file in WAL mode: a connection still open
                // in the old mode made that open fail with a disk I/O error once, under load.
                try queue.close()
            }
            let journal = try SQLiteJournal.open(at: path)
            let waiting = try #require(try await journal.transfer(id: 1))
            #expect(waiting.state == .waiting)
            #expect(waiting.waitingSince == waiting.updatedAt)
            #expect(waiting.retryAt != nil)
            #expect(waiting.durableBytes == 10)
            #expect(try await journal.transfer(id: 2)?.state == .paused)
            let events = try await journal.events(session: "s", after: 0, limit: 10)
            #expect(events.map(\.kind) == [.waiting])
            #expect(events.first?.attempt == 3)
        }
    }
}
