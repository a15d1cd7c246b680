import FerryKit
import Foundation
import Testing

@testable import FerryCore

/// The control's entries read back as written, whether kept compact (at rest) or whole (with a
/// worker, a timer, failures or a wait), and move between the two as they change.
@Suite struct TransferControlEntriesTests {
    typealias Entry = TransferControl.Entry

    static func variants() -> [Entry] {
        var plain = Entry(state: .queued, session: "cli")
        var scheduled = Entry(state: .paused, session: "podcasts", startAfter: Date(timeIntervalSinceReferenceDate: 812_345_678.123_456))
        scheduled.keepsPartFile = true
        scheduled.priority = 1
        scheduled.rank = -42
        plain.rank = nil
        var withWorker = plain
        withWorker.state = .running
        withWorker.worker = 7
        var waiting = Entry(state: .waiting, session: "cli")
        waiting.failures = 3
        waiting.waitingSince = Date(timeIntervalSinceReferenceDate: 1)
        waiting.retryAt = Date(timeIntervalSinceReferenceDate: 2)
        waiting.timer = 9
        var forNetwork = waiting
        forNetwork.timer = nil
        forNetwork.waitsForNetwork = true
        var finishing = withWorker
        finishing.finishing = true
        var removed = Entry(state: .cancelled, session: "x")
        removed.removed = true
        var farPriority = plain
        farPriority.priority = 1_000  // Beyond a compact entry's byte: kept whole.
        return [plain, scheduled, withWorker, waiting, forNetwork, finishing, removed, farPriority]
    }

    @Test func everyEntryReadsBackAsWritten() {
        var entries = TransferControl.Entries()
        for (index, entry) in Self.variants().enumerated() { entries[Int64(index)] = entry }
        #expect(entries.count == Self.variants().count)
        for (index, entry) in Self.variants().enumerated() { #expect(entries[Int64(index)] == entry) }
    }

    @Test func anEntryChangingBetweenRestAndWorkIsOneEntry() {
        var entries = TransferControl.Entries()
        entries[1] = Entry(state: .queued, session: "cli")
        entries[1]?.state = .running
        entries[1]?.worker = 3
        #expect(entries.count == 1 && entries.working == [1: "cli"])
        entries[1]?.worker = nil
        entries[1]?.state = .queued
        #expect(entries.count == 1 && entries.working.isEmpty)
        #expect(entries[1] == Entry(state: .queued, session: "cli"))
        entries[1] = nil
        #expect(entries.count == 0 && entries[1] == nil)
    }

    @Test func sortedFindsBothKindsInIdOrder() {
        var entries = TransferControl.Entries()
        for (index, entry) in Self.variants().enumerated().reversed() { entries[Int64(index)] = entry }
        let found = entries.sorted { $0.worker == nil }.map(\.key)
        #expect(found == [0, 1, 3, 4, 6, 7])
        #expect(entries.sorted(mayRest: false) { $0.worker == nil }.map(\.key) == [3, 4, 6, 7])
    }
}
