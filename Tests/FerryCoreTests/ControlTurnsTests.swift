import FerryKit
import Foundation
import Testing

@testable import FerryCore

/// What the control decides that the engine used to: whose turn a command on a transfer is,
/// when a cluster's member claims and how much, and that a requeue and a start in one step are
/// journaled once.
@Suite struct ControlTurnsTests {
    typealias Control = TransferControl
    typealias Entry = TransferControl.Entry
    static let now = Date(timeIntervalSince1970: 1_000_000)

    @Test func commandsOnOneTransferRunInTurnAndOthersAtOnce() throws {
        var control = Control(limits: .init(daemon: 1))
        #expect(try control.handle(.commandArrived(1, token: 10), now: Self.now) == [.runCommand(token: 10)])
        #expect(try control.handle(.commandArrived(1, token: 11), now: Self.now).isEmpty)
        #expect(try control.handle(.commandArrived(1, token: 12), now: Self.now).isEmpty)
        #expect(try control.handle(.commandArrived(2, token: 13), now: Self.now) == [.runCommand(token: 13)], "another transfer's runs at once")
        #expect(try control.handle(.commandDone(1), now: Self.now) == [.runCommand(token: 11)])
        #expect(try control.handle(.commandDone(1), now: Self.now) == [.runCommand(token: 12)])
        #expect(try control.handle(.commandDone(1), now: Self.now).isEmpty)
        #expect(try control.handle(.commandDone(1), now: Self.now).isEmpty, "a stray end changes nothing")
        #expect(try control.handle(.commandArrived(1, token: 14), now: Self.now) == [.runCommand(token: 14)])
    }

    @Test func aFinishedTransferReadForACommandIsForgottenWhenTheCommandEnds() throws {
        var control = Control(limits: .init(daemon: 1))
        _ = try control.handle(.commandArrived(1, token: 1), now: Self.now)
        _ = try control.handle(.loaded([(id: Int64(1), entry: Entry(state: .completed, session: "s"))]), now: Self.now)
        #expect(control.entry(1)?.state == .completed)
        #expect(throws: FerryError.self) { try control.handle(.pause(1), now: Self.now) }
        _ = try control.handle(.commandDone(1), now: Self.now)
        #expect(control.entry(1) == nil)
    }

    @Test func aMemberClaimsItsFreeSlotsOneClaimAtATime() throws {
        var control = Control(limits: .init(daemon: 3, sessions: ["s": 1], paused: ["p"]), shared: true)
        let claim = try control.handle(.claimDue, now: Self.now)
        #expect(claim == [.claim(limit: 3, sessions: ["s": 1], paused: ["p"], excluding: [])])
        #expect(try control.handle(.claimDue, now: Self.now).isEmpty, "one claim at a time")
        _ = try control.handle(.claimed([(id: Int64(1), entry: Entry(state: .queued, session: "a"))]), now: Self.now)
        #expect(try control.handle(.claimDue, now: Self.now) == [.claim(limit: 2, sessions: ["s": 1], paused: ["p"], excluding: [])])
        // A failed claim reports nothing claimed: the next may go.
        _ = try control.handle(.claimed([]), now: Self.now)
        // A schedule that holds every session: no claim.
        _ = try control.handle(.limits(.init(daemon: 3, paused: [Control.Limits.everySession])), now: Self.now)
        #expect(try control.handle(.claimDue, now: Self.now).isEmpty)
        // On one machine there is nothing to claim.
        var single = Control(limits: .init(daemon: 3))
        #expect(try single.handle(.claimDue, now: Self.now).isEmpty)
    }

    @Test func aLostClaimIsGivenUpOnceItsWorkerLetsGoAndNotClaimedBefore() throws {
        var control = Control(limits: .init(daemon: 2), shared: true)
        _ = try control.handle(.claimed([(id: Int64(1), entry: Entry(state: .queued, session: "s"))]), now: Self.now)
        let worker = try #require(control.entry(1)?.worker)
        #expect(try control.handle(.lost(1), now: Self.now) == [.stopWorker(1)])
        #expect(try control.handle(.claimDue, now: Self.now) == [.claim(limit: 2, sessions: [:], paused: [], excluding: [1])])
        _ = try control.handle(.claimed([]), now: Self.now)
        #expect(try control.handle(.workerEnded(1, worker: worker, .stopped), now: Self.now) == [.releaseLease(1)])
        #expect(try control.handle(.claimDue, now: Self.now) == [.claim(limit: 2, sessions: [:], paused: [], excluding: [])])
        // One no worker held is given up at once; one not claimed here is not ours to give up.
        var other = Control(limits: .init(daemon: 1), shared: true)
        var waiting = Entry(state: .waiting, session: "s")
        waiting.retryAt = Self.now.addingTimeInterval(30)
        _ = try other.handle(.claimed([(id: Int64(5), entry: waiting)]), now: Self.now)
        #expect(try other.handle(.lost(5), now: Self.now) == [.cancelRetryTimer(5), .releaseLease(5)])
        #expect(try other.handle(.lost(6), now: Self.now).isEmpty)
    }

    @Test func aPausedClaimIsGivenBackAfterItsChangeIsJournaled() throws {
        var control = Control(limits: .init(daemon: 1), shared: true)
        _ = try control.handle(.claimed([(id: Int64(1), entry: Entry(state: .queued, session: "s")), (id: Int64(2), entry: Entry(state: .queued, session: "s"))]), now: Self.now)
        // 2 waits in the queue here: paused, it leaves it, and its claim goes back after the pause is journaled.
        #expect(try control.handle(.pause(2), now: Self.now) == [.journal(2, .paused), .releaseLease(2)])
        #expect(control.leased == [1])
    }

    @Test func aRequeueAndAStartInOneStepAreJournaledOnce() {
        let actions: [Control.Action] = [.journal(1, .queued(.retry)), .journal(2, .queued(.interrupted)), .journal(3, .queued(.retry)), .startWorker(1, worker: 4), .startWorker(2, worker: 5)]
        #expect(Control.journaledOnce(actions) == [.journal(3, .queued(.retry)), .startWorker(1, worker: 4), .startWorker(2, worker: 5)])
    }

    @Test func newOptionsStartARunningTransferAgainFromItsBytesWithoutPausingIt() throws {
        var control = Control(limits: .init(daemon: 1))
        _ = try control.handle(.enqueued([(id: Int64(1), entry: Entry(state: .queued, session: "s"))]), now: Self.now)
        let worker = try #require(control.entry(1)?.worker)
        #expect(try control.handle(.restart(1), now: Self.now) == [.stopWorker(1)])
        #expect(try control.handle(.restart(1), now: Self.now).isEmpty, "already stopping")
        // Its worker let go: it starts again at once (no second's delay), and nothing is journaled
        // but the new start.
        let again = try control.handle(.workerEnded(1, worker: worker, .stopped), now: Self.now)
        #expect(TransferControlTests.normalized(again) == [.startWorker(1, worker: 0)])
        #expect(control.entry(1)?.restarting == false)
        // A worker that finished before it stopped: it completes.
        let next = try #require(control.entry(1)?.worker)
        _ = try control.handle(.restart(1), now: Self.now)
        let done = try control.handle(.workerEnded(1, worker: next, .completed(path: "/f", sha256: "a")), now: Self.now)
        #expect(done == [.journal(1, .completed(path: "/f", sha256: "a"))])
    }
}
