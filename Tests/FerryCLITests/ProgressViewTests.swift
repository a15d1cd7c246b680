import FerryKit
import Foundation
import Testing

@testable import ferry

/// What `ferry get` and `ferry wait` make of the event stream.
@Suite struct ProgressViewTests {
    static func transfer(_ id: Int64, _ state: TransferState = .queued) -> Transfer {
        Transfer(id: id, url: "http://127.0.0.1/\(id)", session: "cli", state: state, createdAt: Date(), updatedAt: Date())
    }

    static func event(_ kind: TransferEvent.Kind, _ id: Int64, seq: Int64?, bytes: Int64? = nil, total: Int64? = nil) -> TransferEvent {
        var event = TransferEvent(kind: kind, transferId: id, session: "cli", bytesReceived: bytes, totalBytes: total)
        event.seq = seq
        return event
    }

    @Test func finishesWhenEveryTransferReachedAFinalState() {
        var view = ProgressView(transfers: [Self.transfer(1), Self.transfer(2)])
        #expect(!view.allFinal)
        view.apply(Self.event(.started, 1, seq: 3))
        view.apply(Self.event(.completed, 1, seq: 4))
        #expect(!view.allFinal)
        view.apply(Self.event(.failed, 2, seq: 5))
        #expect(view.allFinal)
        #expect(view.transfers.map(\.state) == [.completed, .failed])
    }

    /// Live progress is sampled apart from the journal: a sample that arrives after `completed`
    /// once turned the transfer back to running, and `ferry get` waited forever.
    @Test func lateLiveProgressDoesNotReopenAFinishedTransfer() {
        var view = ProgressView(transfers: [Self.transfer(1)])
        view.apply(Self.event(.started, 1, seq: 2))
        view.apply(Self.event(.progress, 1, seq: nil, bytes: 10))
        #expect(view.transfers[0].state == .running)
        view.apply(Self.event(.completed, 1, seq: 3, bytes: 100))
        view.apply(Self.event(.progress, 1, seq: nil, bytes: 90))
        #expect(view.transfers[0].state == .completed)
        #expect(view.transfers[0].bytesReceived == 100)
        #expect(view.allFinal)
    }

    @Test func liveProgressStartsAQueuedTransferButNotAPausedOne() {
        var view = ProgressView(transfers: [Self.transfer(1), Self.transfer(2, .paused)])
        view.apply(Self.event(.progress, 1, seq: nil, bytes: 5))
        view.apply(Self.event(.progress, 2, seq: nil, bytes: 5))
        #expect(view.transfers.map(\.state) == [.running, .paused])
        // A journaled event does change it: the person resumed it.
        view.apply(Self.event(.resumed, 2, seq: 9, bytes: 5))
        #expect(view.transfers[1].state == .running)
    }

    /// A pause is journaled with the bytes of the last checkpoint, then the worker's own last
    /// checkpoint journals the rest as progress: the line stays paused and never goes back.
    @Test func theCheckpointAfterAPauseKeepsItPausedAndTheCountNeverGoesBack() {
        var view = ProgressView(transfers: [Self.transfer(1)])
        view.apply(Self.event(.started, 1, seq: 2, bytes: 0, total: 1000))
        view.apply(Self.event(.progress, 1, seq: nil, bytes: 300, total: 1000))
        view.apply(Self.event(.paused, 1, seq: 3, bytes: 0, total: 1000))
        #expect(view.transfers[0].state == .paused)
        #expect(view.transfers[0].bytesReceived == 300)
        view.apply(Self.event(.progress, 1, seq: 4, bytes: 330, total: 1000))
        #expect(view.transfers[0].state == .paused)
        #expect(view.transfers[0].bytesReceived == 330)
        // Resumed from what is on disk (after a kill -9, less than was shown): the count follows.
        view.apply(Self.event(.resumed, 1, seq: 5, bytes: 200, total: 1000))
        #expect(view.transfers[0].state == .running)
        #expect(view.transfers[0].bytesReceived == 200)
    }
}
