import FerryKit
import Foundation
import Testing

@testable import FerryCore

/// The transfer control of a cluster's member (`shared`): it runs only the transfers it has
/// claimed; one known only for a command is never started here; a lost claim stops its worker
/// or timer and journals nothing.
@Suite struct SharedQueueControlTests {
    typealias Control = TransferControl
    typealias Entry = TransferControl.Entry
    static let now = Date(timeIntervalSince1970: 1_000_000)

    static func claimed(_ transfers: [(Int64, Entry)]) -> Control.Input {
        .claimed(transfers.map { (id: $0.0, entry: $0.1) })
    }

    static func starts(_ actions: [Control.Action]) -> [Int64] {
        actions.compactMap { if case .startWorker(let id, _) = $0 { id } else { nil } }
    }

    @Test func onlyClaimedTransfersStart() throws {
        var control = Control(limits: .init(daemon: 4), shared: true)
        // A transfer adopted for a command (another member's, or nobody's) is not queued here.
        control.load(1, Entry(state: .queued, session: "s"))
        #expect(Self.starts(try control.handle(.scheduleDue, now: Self.now)).isEmpty)
        #expect(control.queued == 0)
        let actions = try control.handle(Self.claimed([(2, Entry(state: .queued, session: "s")), (3, Entry(state: .queued, session: "s"))]), now: Self.now)
        #expect(Self.starts(actions) == [2, 3])
        #expect(control.leased == [2, 3])
        #expect(control.runsHere(2) && !control.runsHere(1))
    }

    @Test func onOneMachineEveryTransferRunsHere() throws {
        var control = Control(limits: .init(daemon: 4))
        control.load(1, Entry(state: .queued, session: "s"))
        #expect(control.leased == nil && control.runsHere(1))
        #expect(Self.starts(try control.handle(.scheduleDue, now: Self.now)) == [1])
    }

    @Test func aCommandOnATransferNotClaimedJournalsItAndLeavesNothingBehind() throws {
        var control = Control(limits: .init(daemon: 4), shared: true)
        // Running on another member: pausing it from here journals the pause (the journal takes
        // the claim away) and stops no worker of ours.
        control.load(7, Entry(state: .running, session: "s"))
        let actions = try control.handle(.pause(7), now: Self.now)
        #expect(actions.contains(.journal(7, .paused)))
        #expect(Self.starts(actions).isEmpty)
        #expect(control.entry(7) == nil)
        // Resumed from here: queued in the journal for whoever claims it, not started here.
        control.load(7, Entry(state: .paused, session: "s"))
        let resumed = try control.handle(.resume(7), now: Self.now)
        #expect(resumed.contains(.journal(7, .queued(.resumed))))
        #expect(Self.starts(resumed).isEmpty)
        #expect(control.entry(7) == nil && control.queued == 0)
    }

    @Test func aClaimedRunningTransferGoesBackIntoTheQueueAndAWaitingOneGetsItsTimer() throws {
        var control = Control(limits: .init(daemon: 1), shared: true)
        var waiting = Entry(state: .waiting, session: "s")
        waiting.retryAt = Self.now.addingTimeInterval(5)
        let actions = try control.handle(Self.claimed([(1, Entry(state: .running, session: "s")), (2, waiting)]), now: Self.now)
        // Its last member was running it: back into the queue, and started at once (a free slot).
        #expect(Self.starts(actions) == [1])
        #expect(actions.contains { if case .armRetryTimer(2, _, .seconds(5)) = $0 { true } else { false } })
        #expect(control.entry(1)?.state == .running && control.entry(2)?.state == .waiting)
    }

    @Test func aLostClaimStopsItsWorkerWithoutJournalingAndFreesTheSlot() throws {
        var control = Control(limits: .init(daemon: 1), shared: true)
        _ = try control.handle(Self.claimed([(1, Entry(state: .queued, session: "s")), (2, Entry(state: .queued, session: "s"))]), now: Self.now)
        let worker = try #require(control.entry(1)?.worker)
        let actions = try control.handle(.lost(1), now: Self.now)
        #expect(actions.contains(.stopWorker(1)))
        #expect(!actions.contains { if case .journal = $0 { true } else { false } })
        #expect(Self.starts(actions) == [2])
        #expect(control.entry(1) == nil && control.leased == [2])
        // The worker's late report changes nothing but gives the claim up, now that it let go.
        #expect(try control.handle(.workerEnded(1, worker: worker, .stopped), now: Self.now) == [.releaseLease(1)])
    }

    @Test func aClaimedTransferWhoseMoveWasMadeCompletesAndNeverStarts() throws {
        var control = Control(limits: .init(daemon: 2), shared: true)
        var entry = Entry(state: .running, session: "s")
        entry.finishing = true
        let actions = try control.handle(.claimedMoved(5, entry, path: "/lib/r02.bin", sha256: "abc"), now: Self.now)
        #expect(actions.contains(.journal(5, .completed(path: "/lib/r02.bin", sha256: "abc"))))
        #expect(Self.starts(actions).isEmpty)
        #expect(control.entry(5) == nil)
        // Not running any more (its last member had it so): it runs again, never completes twice.
        let queued = try control.handle(.claimedMoved(6, Entry(state: .queued, session: "s"), path: "/lib/x", sha256: "d"), now: Self.now)
        #expect(!queued.contains { if case .journal(6, .completed) = $0 { true } else { false } })
        #expect(Self.starts(queued) == [6])
    }

    @Test func aLostClaimOnAWaitingTransferCancelsItsTimer() throws {
        var control = Control(limits: .init(daemon: 1), shared: true)
        var waiting = Entry(state: .waiting, session: "s")
        waiting.retryAt = Self.now.addingTimeInterval(30)
        _ = try control.handle(Self.claimed([(4, waiting)]), now: Self.now)
        // No worker holds it: its claim is given up at once.
        #expect(try control.handle(.lost(4), now: Self.now) == [.cancelRetryTimer(4), .releaseLease(4)])
        #expect(control.entry(4) == nil && control.leased == [])
    }

    @Test func aFinishedClaimedTransferIsReleased() throws {
        var control = Control(limits: .init(daemon: 1), shared: true)
        _ = try control.handle(Self.claimed([(1, Entry(state: .queued, session: "s"))]), now: Self.now)
        let worker = try #require(control.entry(1)?.worker)
        let actions = try control.handle(.workerEnded(1, worker: worker, .completed(path: "/lib/f", sha256: "abc")), now: Self.now)
        // Completed, then the claim given back, in that order.
        #expect(actions == [.journal(1, .completed(path: "/lib/f", sha256: "abc")), .releaseLease(1)])
        #expect(control.entry(1) == nil && control.leased == [])
    }
}
