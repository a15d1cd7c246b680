import FerryKit
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryCore

/// What only the SQLite journal does; what both journals do is `JournalContractTests`
/// (FerryClusterTests), run against each.
@Suite struct JournalTests {
    private func draft(_ url: String = "http://127.0.0.1/a", session: String = "s") -> TransferRecord {
        TransferRecord(session: session, url: url, folder: "Downloads")
    }

    @Test func aJournalFileReopensWithItsData() async throws {
        try await withTemporaryDirectory { folder in
            let url = folder.appendingPathComponent("state/journal.sqlite")
            do {
                let journal = try SQLiteJournal.open(at: url)
                _ = try await journal.createTransfer(draft(), reuseExisting: false)
            }
            let reopened = try SQLiteJournal.open(at: url)
            #expect(try await reopened.transfers().count == 1)
            #expect(try await reopened.counts() == [.queued: 1])
        }
    }
}
