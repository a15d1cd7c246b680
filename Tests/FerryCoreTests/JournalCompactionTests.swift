import FerryKit
import FerryTestSupport
import Foundation
import GRDB
import Testing

@testable import FerryCore

/// The SQLite journal gives back what pruning freed: it runs in incremental auto-vacuum (a
/// journal made before is converted when opened), and `compact()` returns the free pages, so
/// the file shrinks after a prune instead of staying at its largest.
@Suite struct JournalCompactionTests {
    static func pages(_ journal: SQLiteJournal) async throws -> (count: Int, free: Int, mode: Int) {
        try await journal.writer.read { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0, try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0,
                try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") ?? 0
            )
        }
    }

    @Test func prunedEventsGiveTheirPagesBack() async throws {
        try await withTemporaryDirectory { folder in
            let journal = try SQLiteJournal.open(at: folder.appendingPathComponent("journal.sqlite"))
            #expect(try await Self.pages(journal).mode == 2, "incremental auto-vacuum from the start")
            let payload = String(repeating: "x", count: 400)
            try await journal.writer.write { db in
                for n in 0..<20_000 {
                    try db.execute(
                        sql: "INSERT INTO event (session, transferId, kind, payload, createdAt) VALUES ('cli', ?, 'progress', ?, ?)",
                        arguments: [n, "{\"date\":\"2026-01-01T00:00:00Z\",\"kind\":\"progress\",\"session\":\"cli\",\"transferId\":\(n),\"reason\":\"\(payload)\"}", JournalDate(Date(timeIntervalSince1970: 1_700_000_000))]
                    )
                }
            }
            let full = try await Self.pages(journal)
            let gone = try await journal.pruneEvents(EventRetention(window: .init(days: 1, count: 100)), now: Date())
            #expect(gone == 20_000, "all older than a day")
            #expect(try await Self.pages(journal).free > full.count / 2, "freed, not yet given back")
            try await journal.compact()
            let after = try await Self.pages(journal)
            #expect(after.free == 0)
            #expect(after.count < full.count / 10, "\(full.count) pages, then \(after.count)")
        }
    }

    /// The engine checks the journal at start only when the last one did not stop cleanly.
    @Test func theJournalIsCheckedAfterAnUncleanStopOnly() async throws {
        try await withTemporaryDirectory { home in
            try await EngineHarness.run(home: home) { h in
                try await eventually("the start") { await h.engine.journalCheck != nil }
                #expect(await h.engine.journalCheck == .skipped, "a new journal")
            }
            try await EngineHarness.run(home: home) { h in
                try await eventually("the start") { await h.engine.journalCheck != nil }
                #expect(await h.engine.journalCheck == .skipped, "the last stop was clean")
            }
            // Left as a killed daemon leaves it: marked running, never cleared.
            _ = try await SQLiteJournal.open(at: home.appendingPathComponent("state/journal.sqlite"), tables: [.listening, .aria2]).markRunning()
            let checked = try await EngineHarness.run(home: home) { h in
                try await eventually("the start") { await h.engine.journalCheck != nil }
                return await h.engine.journalCheck
            }
            #expect(checked == .intact)
            let after = try await EngineHarness.run(home: home) { h in
                try await eventually("the start") { await h.engine.journalCheck != nil }
                return await h.engine.journalCheck
            }
            #expect(after == .skipped, "the checked run stopped cleanly")
        }
    }

    @Test func aJournalMadeWithoutAutoVacuumIsConvertedWhenOpenedAndKeepsItsRows() async throws {
        try await withTemporaryDirectory { folder in
            let url = folder.appendingPathComponent("journal.sqlite")
            let old = try SQLiteJournal(DatabaseQueue(path: url.path), tables: [])
            _ = try await old.createTransfer(TransferRecord(session: "s", url: "http://127.0.0.1/kept", folder: ""), reuseExisting: false)
            #expect(try await Self.pages(old).mode == 0, "made as journals were before")
            try await old.writer.close()
            let reopened = try SQLiteJournal.open(at: url)
            #expect(try await Self.pages(reopened).mode == 2)
            #expect(try await reopened.transfers().map(\.url) == ["http://127.0.0.1/kept"])
        }
    }
}
