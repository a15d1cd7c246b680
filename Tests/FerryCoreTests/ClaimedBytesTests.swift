import FerryKit
import Foundation
import Testing

@testable import FerryCore

/// A member's decision on the bytes of a transfer it claimed: every kind of record against a
/// part file that is missing, shorter, as long, or longer.
@Suite struct ClaimedBytesTests {
    static func record(kind: TransferKind = .download, durable: Int64 = 0, ranges: Bool = false, reserved: Bool = false) -> TransferRecord {
        var record = TransferRecord(session: "s", url: "http://files.test/f", folder: "Downloads")
        record.kind = kind
        record.durableBytes = durable
        record.segments = ranges ? SegmentPlan.journalText([(0, 10, 100)]) : nil
        record.fileName = reserved ? "f" : nil
        return record
    }

    @Test func everyRecordAgainstEveryPartFile() {
        let cases: [(String, TransferRecord, [ClaimedBytes])] = [
            // Part file here: 0 bytes, 500, 1,000, 2,000.
            ("a stream with 1,000 durable bytes", Self.record(durable: 1000), [.startOver, .startOver, .keep, .keep]),
            ("ranges", Self.record(durable: 10, ranges: true), [.startOver, .keep, .keep, .keep]),
            ("no bytes yet", Self.record(), [.keep, .keep, .keep, .keep]),
            ("a reserved name (the interrupted move decides)", Self.record(durable: 1000, reserved: true), [.keep, .keep, .keep, .keep]),
            ("an upload", Self.record(kind: .upload, durable: 1000), [.keep, .keep, .keep, .keep]),
        ]
        for (what, record, expected) in cases {
            #expect([0, 500, 1000, 2000].map { ClaimedBytes(record, partLength: $0) } == expected, "\(what)")
        }
    }
}
