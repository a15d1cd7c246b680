import FerryKit
import Foundation
import Testing

@testable import FerryCore

/// The journal's events are stored as JSONEncoder would write them, whether written by hand
/// (kind, transfer, session and date alone) or not.
@Suite struct EventPayloadTests {
    static let sessions = ["cli", "podcasts", "with \"quotes\" and \\ and / and \n and \u{01}", "été 🎧"]

    @Test(arguments: TransferEvent.Kind.allCases) func aPlainEventIsWhatJSONEncoderWrites(kind: TransferEvent.Kind) throws {
        for (index, session) in Self.sessions.enumerated() {
            let date = Date(timeIntervalSince1970: 1_795_000_000.987 + Double(index) * 86_400.5)
            let event = TransferEvent(kind: kind, transferId: Int64(index * 1_000_003), session: session, date: date)
            #expect(try SQLiteJournal.payload(event) == String(decoding: try FerryJSON.encoder().encode(event), as: UTF8.self))
        }
    }

    @Test func anEventWithMoreIsWhatJSONEncoderWrites() throws {
        let event = TransferEvent(kind: .progress, transferId: 1, session: "s", bytesReceived: 10, totalBytes: 20, ranges: [])
        #expect(try SQLiteJournal.payload(event) == String(decoding: try FerryJSON.encoder().encode(event), as: UTF8.self))
    }

    /// A new field of TransferEvent must be added to `SQLiteJournal.payload(_:)`'s test of what it
    /// can write by hand: this count says so.
    @Test func theEventHasTheFieldsThePayloadKnows() {
        let event = TransferEvent(kind: .created, transferId: 1, session: "s")
        #expect(Mirror(reflecting: event).children.count == 18)
    }
}
