import FerryKit
import FerryTestSupport
import Foundation
import GRDB
import Testing

@testable import FerryCore

/// The hand-written columns of a transfer (``TransferRecord/columns``) are the table's, and
/// store what GRDB's own encoding stored: every field, with a value and without, reads back as
/// written; a date's text is GRDB's to the millisecond.
@Suite struct TransferRecordColumnsTests {
    /// Every optional field set (dates on whole milliseconds: the journal keeps milliseconds).
    static func full() -> TransferRecord {
        let date = { (n: Double) in Date(timeIntervalSince1970: 1_795_000_000 + n) }
        var record = TransferRecord(session: "s", url: "http://127.0.0.1/a?b=c", folder: "Music", suggestedName: "x.bin",
                                    preferredName: "Artist - Song", taskDescription: "it's \"quoted\"", now: date(0.123))
        record.state = .waiting
        record.nameHint = "hint"
        record.fileName = "x (2).bin"
        record.durableBytes = 123_456_789_012
        record.totalBytes = 987_654_321_098
        record.validator = "\"etag\""
        record.sha256 = String(repeating: "ab", count: 32)
        record.errorCode = "http_status"
        record.errorMessage = "The server answered 503."
        record.attempts = 7
        record.failures = 3
        record.retryAt = date(60.5)
        record.keepsPartFile = true
        record.updatedAt = date(1.999)
        record.completedAt = date(2)
        record.kind = .upload
        record.method = "PUT"
        record.sourcePath = "/tmp/up.bin"
        record.sourceIdentity = "1:2:3"
        record.formField = "file"
        record.uploadProtocol = .tus
        record.uploadURL = "http://127.0.0.1/files/1"
        record.responseStatus = 201
        record.responseHeaders = "{\"a\":\"b\"}"
        record.responseBody = "ok"
        record.options = "{\"maxConcurrent\":2}"
        record.startAfter = date(3600)
        record.waitReason = "network"
        record.waitingSince = date(-1.001)
        record.waitsForNetwork = true
        record.segments = "[[0,10]]"
        record.mirrors = "[]"
        record.directory = "/home/u/isos"
        record.outputName = "x.iso"
        record.overwrite = true
        record.checksum = "sha-256=" + String(repeating: "0", count: 64)
        record.serverDigest = "Repr-Digest sha-256=:AAAA:"
        record.verifiedBy = "checksum sha-256"
        record.priority = -1
        record.queueRank = -5
        record.hidden = true
        record.requestedBy = "alice"
        return record
    }

    /// The record with each date as the journal gives it back (to the millisecond, parsed).
    static func asStored(_ record: TransferRecord) -> TransferRecord {
        let stored = { (date: Date) in Date.fromDatabaseValue(date.databaseValue)! }
        var record = record
        record.createdAt = stored(record.createdAt)
        record.updatedAt = stored(record.updatedAt)
        record.retryAt = record.retryAt.map(stored)
        record.completedAt = record.completedAt.map(stored)
        record.startAfter = record.startAfter.map(stored)
        record.waitingSince = record.waitingSince.map(stored)
        return record
    }

    @Test func theColumnsAreTheTables() async throws {
        try await withTemporaryDirectory { folder in
            let journal = try SQLiteJournal.open(at: folder.appendingPathComponent("journal.sqlite"))
            let columns = try await journal.writer.read { db in try db.columns(in: "transfer").map(\.name) }
            #expect(Set(columns) == Set(TransferRecord.columns + ["id"]))
            #expect(TransferRecord.columns.count == Set(TransferRecord.columns).count)
            #expect(TransferRecord.columns.count == Self.full().columnValues.count)
        }
    }

    @Test(arguments: [true, false]) func aRecordReadsBackAsWritten(full: Bool) async throws {
        try await withTemporaryDirectory { folder in
            let journal = try SQLiteJournal.open(at: folder.appendingPathComponent("journal.sqlite"))
            let written = full ? Self.full() : TransferRecord(session: "s", url: "http://127.0.0.1/a", folder: "Downloads",
                                                              now: Date(timeIntervalSince1970: 1_795_000_000.5))
            let (id, read) = try await journal.writer.write { db in
                var record = written
                try record.insertQuickly(db)
                return (record.id!, try TransferRecord.fetchOne(db, id: record.id!))
            }
            var expected = Self.asStored(written)
            expected.id = id
            #expect(read == expected)
            // Changed and written again: every column of the row.
            var changed = expected
            changed.state = .completed
            changed.errorMessage = nil
            changed.completedAt = Date(timeIntervalSince1970: 1_795_000_100.25)
            let update = changed
            try await journal.writer.write { db in try update.updateQuickly(db) }
            #expect(try await journal.transfer(id: changed.transferId) == Self.asStored(changed))
        }
    }

    /// JournalDate's text against GRDB's DateFormatter, for dates across centuries, leap days
    /// and fractions that binary floating point cannot hold exactly.
    @Test func aDateIsStoredAsGRDBStoresIt() {
        var generator = SystemRandomNumberGenerator()
        var dates = [0, 0.001, 0.999, 951_782_400.5, 1_795_000_000.123, 1_795_000_000.9999, -1.5, 4_102_444_799.999, 1e-4]
            .map(Date.init(timeIntervalSince1970:))
        for _ in 0..<2_000 { dates.append(Date(timeIntervalSince1970: Double.random(in: 0...4_102_444_800, using: &generator))) }
        for date in dates {
            #expect(JournalDate(date)!.databaseValue == date.databaseValue, "\(date.timeIntervalSince1970)")
        }
    }
}
