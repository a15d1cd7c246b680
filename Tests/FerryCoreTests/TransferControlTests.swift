import FerryKit
import Foundation
import Testing

@testable import FerryCore

/// The transfer control without I/O: every state × every input written out, then the paths
/// through it that matter (slots and order, stops before journaling, failures and waiting,
/// recovery, a journal that refuses, shutdown).
@Suite struct TransferControlTests {
    typealias Control = TransferControl
    typealias Entry = TransferControl.Entry
    typealias Action = TransferControl.Action

    static let now = Date(timeIntervalSince1970: 1_000_000)
    static let policy = RetryPolicy(maxAttempts: nil, baseDelay: .seconds(10), maxDelay: .seconds(60), resourceTimeout: .seconds(3600))

    static func failure(status: Int, network: Bool = false) -> AttemptFailure {
        var failure = AttemptFailure(
            HTTPStatusFailure(status: status, reason: "R", url: URL(string: "http://files.test/f")!, retryAfter: nil), now: now
        )
        failure.waitsForNetwork = network
        return failure
    }

    /// A failed attempt after which the transfer waits 5 s (10 s backoff, no jitter).
    static let busy = Control.WorkerReport.failed(.init(failure: failure(status: 503), progressed: false, policy: policy, unit: 0))
    static let gone = Control.WorkerReport.failed(.init(failure: failure(status: 404), progressed: false, policy: policy, unit: 0))
    static let done = Control.WorkerReport.completed(path: "/lib/f", sha256: "abc")

    /// A control holding transfer 1 (of session "s") in `state`, as it gets there: running with a
    /// worker, waiting with a timer; queued with no free slot.
    static func control(in state: TransferState) throws -> Control {
        var control = Control(limits: .init(daemon: state == .queued ? 0 : 1))
        switch state {
        case .running, .waiting:
            control.load(1, .init(state: .queued, session: "s"))
            _ = try control.handle(.scheduleDue, now: now)
            if state == .waiting { _ = try control.handle(.workerEnded(1, worker: worker(control), busy), now: now) }
        default:
            control.load(1, .init(state: state, session: "s"))
        }
        return control
    }

    static func worker(_ control: Control) -> Int { control.entry(1)?.worker ?? 0 }
    static func timer(_ control: Control) -> Int { control.entry(1)?.timer ?? 0 }

    enum Input: String, CaseIterable, Sendable {
        case pause, resume, cancel, cancelKeeping, remove, reopen, restart, prioritize, finishing
        case stopped, completed, busy, gone, retryDue, networkBack, scheduleDue

        func input(_ control: Control) -> Control.Input {
            let worker = TransferControlTests.worker(control)
            switch self {
            case .pause: return .pause(1)
            case .resume: return .resume(1)
            case .cancel: return .cancel(1, keepingPartFile: false)
            case .cancelKeeping: return .cancel(1, keepingPartFile: true)
            case .remove: return .remove(1)
            case .reopen: return .reopen(1)
            case .restart: return .restart(1)
            case .prioritize: return .reorder(1, priority: 1, position: nil)
            case .finishing: return .finishing(1, worker: worker)
            case .stopped: return .workerEnded(1, worker: worker, .stopped)
            case .completed: return .workerEnded(1, worker: worker, TransferControlTests.done)
            case .busy: return .workerEnded(1, worker: worker, TransferControlTests.busy)
            case .gone: return .workerEnded(1, worker: worker, TransferControlTests.gone)
            case .retryDue: return .retryDue(1, timer: TransferControlTests.timer(control))
            case .networkBack: return .networkBack
            case .scheduleDue: return .scheduleDue
            }
        }
    }

    /// Actions with tokens set to 0: which token is an implementation detail.
    static func normalized(_ actions: [Action]) -> [Action] {
        actions.map { action in
            switch action {
            case .startWorker(let id, _): .startWorker(id, worker: 0)
            case .armRetryTimer(let id, _, let after): .armRetryTimer(id, timer: 0, after: after)
            default: action
            }
        }
    }

    enum Expected: Sendable, CustomStringConvertible {
        /// The state afterwards (nil: forgotten), and the actions.
        case to(TransferState?, [Action])
        case refused

        var description: String {
            switch self {
            case .to(let state, let actions): "\(state.map(\.rawValue) ?? "forgotten") \(actions)"
            case .refused: "refused"
            }
        }
    }

    static let waited = Action.armRetryTimer(1, timer: 0, after: .seconds(5))
    static let wait = TransferChange.waiting(
        .init(
            failures: 1, waitingSince: now, retryAt: now.addingTimeInterval(5), reason: failure(status: 503).reason, forNetwork: false,
            error: failure(status: 503).error.info
        )
    )
    static let fail = TransferChange.failed(.init(failures: 1, waitingSince: now, error: .init(code: "http_status", message: failure(status: 404).error.message)))
    static let start = Action.startWorker(1, worker: 0)
    static let raised = Action.journal(1, .reordered(priority: 1, rank: nil))

    /// The whole table: every state × every input. Finished transfers that nothing holds are
    /// forgotten (the journal has them; a command reads them from there).
    static let table: [TransferState: [Input: Expected]] = [
        .queued: [
            .pause: .to(.paused, [.journal(1, .paused)]),
            .resume: .to(.queued, []),
            .cancel: .to(nil, [.journal(1, .cancelled(keepsPartFile: false)), .deletePartFile(1)]),
            .cancelKeeping: .to(nil, [.journal(1, .cancelled(keepsPartFile: true))]),
            .remove: .to(nil, [.journal(1, .cancelled(keepsPartFile: false)), .deletePartFile(1), .journal(1, .removed)]),
            .reopen: .to(.queued, []),
            .restart: .to(.queued, []),  // Its next start takes the new options.
            .prioritize: .to(.queued, [raised]),
            .finishing: .refused,
            .stopped: .to(.queued, []), .completed: .to(.queued, []), .busy: .to(.queued, []), .gone: .to(.queued, []),
            .retryDue: .to(.queued, []),
            .networkBack: .to(.queued, []),
            .scheduleDue: .to(.queued, []),
        ],
        .running: [
            .pause: .to(.paused, [.stopWorker(1), .journal(1, .paused)]),
            .resume: .to(.running, []),
            .cancel: .to(.cancelled, [.stopWorker(1), .journal(1, .cancelled(keepsPartFile: false)), .deletePartFile(1)]),
            .cancelKeeping: .to(.cancelled, [.stopWorker(1), .journal(1, .cancelled(keepsPartFile: true))]),
            .remove: .to(.cancelled, [.stopWorker(1), .journal(1, .cancelled(keepsPartFile: false)), .deletePartFile(1), .journal(1, .removed)]),
            .reopen: .to(.running, []),
            // Its worker stops; the transfer starts again once it has let go.
            .restart: .to(.running, [.stopWorker(1)]),
            .prioritize: .to(.running, [raised]),
            .finishing: .to(.running, []),
            // Not asked to stop: its start could not be journaled; back into the queue for a second.
            .stopped: .to(.queued, [.journal(1, .queued(.interrupted)), .armScheduleTimer(now.addingTimeInterval(1))]),
            .completed: .to(nil, [.journal(1, .completed(path: "/lib/f", sha256: "abc"))]),
            .busy: .to(.waiting, [.journal(1, wait), waited]),
            .gone: .to(.failed, [.journal(1, fail)]),
            .retryDue: .to(.running, []),
            .networkBack: .to(.running, []),
            .scheduleDue: .to(.running, []),
        ],
        .waiting: [
            .pause: .to(.paused, [.cancelRetryTimer(1), .journal(1, .paused)]),
            .resume: .to(.running, [.cancelRetryTimer(1), .journal(1, .queued(.resumed)), start]),
            .cancel: .to(nil, [.cancelRetryTimer(1), .journal(1, .cancelled(keepsPartFile: false)), .deletePartFile(1)]),
            .cancelKeeping: .to(nil, [.cancelRetryTimer(1), .journal(1, .cancelled(keepsPartFile: true))]),
            .remove: .to(nil, [.cancelRetryTimer(1), .journal(1, .cancelled(keepsPartFile: false)), .deletePartFile(1), .journal(1, .removed)]),
            .reopen: .to(.waiting, []),
            .restart: .to(.waiting, []),
            .prioritize: .to(.waiting, [raised]),
            .finishing: .refused,
            .stopped: .to(.waiting, []), .completed: .to(.waiting, []), .busy: .to(.waiting, []), .gone: .to(.waiting, []),
            .retryDue: .to(.running, [start]),  // Requeued and started at once: the start is journaled.
            // It waits for a busy server, not for the network.
            .networkBack: .to(.waiting, []),
            .scheduleDue: .to(.waiting, []),
        ],
        .paused: [
            .pause: .to(.paused, []),
            .resume: .to(.running, [.journal(1, .queued(.resumed)), start]),
            .cancel: .to(nil, [.journal(1, .cancelled(keepsPartFile: false)), .deletePartFile(1)]),
            .cancelKeeping: .to(nil, [.journal(1, .cancelled(keepsPartFile: true))]),
            .remove: .to(nil, [.journal(1, .cancelled(keepsPartFile: false)), .deletePartFile(1), .journal(1, .removed)]),
            .reopen: .to(.running, [.journal(1, .queued(.reopened)), start]),
            .restart: .to(.paused, []),
            .prioritize: .to(.paused, [raised]),
            .finishing: .refused,
            .stopped: .to(.paused, []), .completed: .to(.paused, []), .busy: .to(.paused, []), .gone: .to(.paused, []),
            .retryDue: .to(.paused, []),
            .networkBack: .to(.paused, []),
            .scheduleDue: .to(.paused, []),
        ],
        .failed: [
            .pause: .refused,
            .resume: .to(.running, [.journal(1, .queued(.resumed)), start]),
            .cancel: .to(nil, [.journal(1, .cancelled(keepsPartFile: false)), .deletePartFile(1)]),
            .cancelKeeping: .to(nil, [.journal(1, .cancelled(keepsPartFile: true))]),
            .remove: .to(nil, [.journal(1, .removed), .deletePartFile(1)]),
            .reopen: .to(.running, [.journal(1, .queued(.reopened)), start]),
            .restart: .to(.failed, []),
            .prioritize: .to(.failed, [raised]),
            .finishing: .refused,
            .stopped: .to(.failed, []), .completed: .to(.failed, []), .busy: .to(.failed, []), .gone: .to(.failed, []),
            .retryDue: .to(.failed, []),
            .networkBack: .to(.failed, []),
            .scheduleDue: .to(.failed, []),
        ],
        .completed: [
            .pause: .refused, .resume: .refused, .cancel: .refused, .cancelKeeping: .refused,
            .remove: .to(nil, [.journal(1, .removed), .deletePartFile(1)]),
            .reopen: .to(nil, []),
            .restart: .to(nil, []),
            .prioritize: .refused,
            .finishing: .refused,
            .stopped: .to(nil, []), .completed: .to(nil, []), .busy: .to(nil, []), .gone: .to(nil, []),
            .retryDue: .to(nil, []),
            .networkBack: .to(nil, []),
            .scheduleDue: .to(nil, []),
        ],
        .cancelled: [
            .pause: .refused, .resume: .refused,
            .cancel: .to(nil, []), .cancelKeeping: .to(nil, []),
            .remove: .to(nil, [.journal(1, .removed), .deletePartFile(1)]),
            // Resume data: the part file was kept.
            .reopen: .to(.running, [.journal(1, .queued(.reopened)), start]),
            .restart: .to(nil, []),
            .prioritize: .refused,
            .finishing: .refused,
            .stopped: .to(nil, []), .completed: .to(nil, []), .busy: .to(nil, []), .gone: .to(nil, []),
            .retryDue: .to(nil, []),
            .networkBack: .to(nil, []),
            .scheduleDue: .to(nil, []),
        ],
    ]

    @Test func tableCoversEveryStateAndInput() {
        #expect(Set(Self.table.keys) == Set(TransferState.allCases))
        for state in TransferState.allCases {
            #expect(Set(Self.table[state]!.keys) == Set(Input.allCases), "\(state)")
        }
    }

    @Test(arguments: TransferState.allCases, Input.allCases)
    func transition(_ state: TransferState, _ input: Input) throws {
        var control = try Self.control(in: state)
        let expected = Self.table[state]![input]!
        do {
            let actions = try control.handle(input.input(control), now: Self.now)
            // As every command ends (the engine's turn for the next): a finished transfer read for
            // it is forgotten.
            #expect(try control.handle(.commandDone(1), now: Self.now).isEmpty)
            guard case .to(let next, let expectedActions) = expected else {
                Issue.record("\(state) × \(input): expected \(expected), got \(actions)")
                return
            }
            #expect(Self.normalized(actions) == expectedActions, "\(state) × \(input)")
            #expect(control.entry(1)?.state == next, "\(state) × \(input)")
        } catch {
            guard case .refused = expected else {
                Issue.record("\(state) × \(input): expected \(expected), got \(error)")
                return
            }
            #expect(error.code == .invalidState)
        }
    }

    /// The error an input is refused with, if any.
    static func refusal(_ control: inout Control, _ input: Control.Input) -> FerryError? {
        do {
            _ = try control.handle(input, now: now)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Slots and order

    @Test func startsInIdOrderWithinTheDaemonsAndEachSessionsLimits() throws {
        var control = Control(limits: .init(daemon: 3, sessions: ["a": 1]))
        for id in [5, 1, 3, 2, 4] as [Int64] {
            control.load(id, .init(state: .queued, session: id <= 2 ? "a" : "b"))
        }
        let actions = try control.handle(.scheduleDue, now: Self.now)
        // 1 takes session a's only slot, so 2 waits; 3 and 4 fill the daemon's.
        #expect(Self.normalized(actions) == [.startWorker(1, worker: 0), .startWorker(3, worker: 0), .startWorker(4, worker: 0)])
        #expect(control.running == 3)
        let ended = try control.handle(.workerEnded(1, worker: control.entry(1)!.worker!, Self.done), now: Self.now)
        #expect(Self.normalized(ended) == [.journal(1, .completed(path: "/lib/f", sha256: "abc")), .startWorker(2, worker: 0)])
        #expect(control.entry(1) == nil)
    }

    /// A session a schedule holds keeps its queue; another session's transfers behind it start,
    /// and once the hold ends, the held ones start in their order. A full session's queue waits
    /// while the next session's starts.
    @Test func aHeldOrFullSessionsQueueDoesNotHoldBackOthers() throws {
        var control = Control(limits: .init(daemon: 3, sessions: ["full": 1], paused: ["held"]))
        var batch: [(id: Int64, entry: Entry)] = (1...1_000).map { ($0, Entry(state: .queued, session: "held")) }
        batch += [(1_001, Entry(state: .queued, session: "full")), (1_002, Entry(state: .queued, session: "full"))]
        batch += [(1_003, Entry(state: .queued, session: "open"))]
        let actions = try control.handle(.enqueued(batch), now: Self.now)
        #expect(Self.normalized(actions) == [.startWorker(1_001, worker: 0), .startWorker(1_003, worker: 0)])
        let released = try control.handle(.limits(.init(daemon: 3, sessions: ["full": 1])), now: Self.now)
        #expect(Self.normalized(released) == [.startWorker(1, worker: 0)])
        #expect(control.running == 3)
    }

    @Test func aScheduledStartArmsOneTimerAndStartsWhenDue() throws {
        var control = Control(limits: .init(daemon: 4))
        let later = Self.now.addingTimeInterval(60)
        let actions = try control.handle(.enqueued([(1, .init(state: .queued, session: "s", startAfter: later))]), now: Self.now)
        #expect(actions == [.armScheduleTimer(later)])
        let second = try control.handle(.enqueued([(2, .init(state: .queued, session: "s", startAfter: later))]), now: Self.now)

        #expect(second.isEmpty)
        let due = try control.handle(.scheduleDue, now: later)
        #expect(Self.normalized(due) == [.startWorker(1, worker: 0), .startWorker(2, worker: 0)])
    }

    @Test func aTransferAskedForAgainIsNotTakenTwice() throws {
        var control = Control(limits: .init(daemon: 4))
        _ = try control.handle(.enqueued([(1, .init(state: .queued, session: "s"))]), now: Self.now)
        let again = try control.handle(.enqueued([(1, .init(state: .queued, session: "s"))]), now: Self.now)

        #expect(again.isEmpty)
        #expect(control.running == 1)
    }

    @Test func aResumedTransferKeepsItsPlaceInTheQueue() throws {
        var control = Control(limits: .init(daemon: 0))
        for id in [1, 2, 3] as [Int64] { control.load(id, .init(state: .queued, session: "s")) }
        _ = try control.handle(.pause(1), now: Self.now)
        _ = try control.handle(.resume(1), now: Self.now)
        let actions = try control.handle(.limits(.init(daemon: 1)), now: Self.now)
        #expect(Self.normalized(actions) == [.startWorker(1, worker: 0)])
    }

    /// Higher priorities start first, then the oldest; --first and --last move a transfer ahead
    /// of (behind) every other queued one, raising (lowering) its priority to theirs.
    @Test func priorityAndPositionOrderTheQueue() throws {
        /// The order in which the queue starts its transfers, one slot at a time.
        func order(_ control: Control) throws -> [Int64] {
            var control = control
            var started: [Int64] = []
            var actions = try control.handle(.limits(.init(daemon: 1)), now: Self.now)
            while case .startWorker(let id, let worker)? = actions.first(where: { if case .startWorker = $0 { true } else { false } }) {
                started.append(id)
                actions = try control.handle(.workerEnded(id, worker: worker, Self.done), now: Self.now)
            }
            return started
        }
        var control = Control(limits: .init(daemon: 0))
        for id in 1...5 as ClosedRange<Int64> { control.load(id, .init(state: .queued, session: "s")) }
        #expect(try order(control) == [1, 2, 3, 4, 5])
        _ = try control.handle(.reorder(4, priority: TransferPriority.high.rank, position: nil), now: Self.now)
        _ = try control.handle(.reorder(2, priority: TransferPriority.low.rank, position: nil), now: Self.now)
        #expect(try order(control) == [4, 1, 3, 5, 2])
        // 5 first: raised to high, ahead of 4; 4 last: lowered to low, behind 2.
        let first = try control.handle(.reorder(5, priority: nil, position: .first), now: Self.now)
        #expect(first == [.journal(5, .reordered(priority: 1, rank: 0))])
        _ = try control.handle(.reorder(4, priority: nil, position: .last), now: Self.now)
        #expect(try order(control) == [5, 1, 3, 2, 4])
        // A paused transfer keeps its new place for when it is resumed.
        _ = try control.handle(.pause(3), now: Self.now)
        _ = try control.handle(.reorder(3, priority: nil, position: .first), now: Self.now)
        _ = try control.handle(.resume(3), now: Self.now)
        #expect(try order(control) == [3, 5, 1, 2, 4])
    }

    // MARK: - Workers

    /// A stopped worker's slot is free only once it has let go; its report never undoes the pause.
    @Test func aPausedWorkersSlotFreesWhenItLetsGoAndItsReportIsIgnored() throws {
        var control = Control(limits: .init(daemon: 1))
        control.load(1, .init(state: .queued, session: "s"))
        control.load(2, .init(state: .queued, session: "s"))
        _ = try control.handle(.scheduleDue, now: Self.now)
        let worker = control.entry(1)!.worker!
        let paused = try control.handle(.pause(1), now: Self.now)

        #expect(paused == [.stopWorker(1), .journal(1, .paused)])
        #expect(control.running == 1)
        #expect(control.isHeld(1))
        let ended = try control.handle(.workerEnded(1, worker: worker, Self.done), now: Self.now)
        #expect(Self.normalized(ended) == [.startWorker(2, worker: 0)])
        #expect(control.entry(1)?.state == .paused)
        #expect(!control.isHeld(1))
    }

    @Test func aReportFromAnEarlierWorkerIsIgnored() throws {
        var control = try Self.control(in: .running)
        let first = Self.worker(control)
        _ = try control.handle(.pause(1), now: Self.now)
        _ = try control.handle(.resume(1), now: Self.now)  // Queued; the first worker still holds it.
        _ = try control.handle(.workerEnded(1, worker: first, .stopped), now: Self.now)
        let second = Self.worker(control)
        #expect(second != 0 && second != first)
        let late = try control.handle(.workerEnded(1, worker: first, Self.done), now: Self.now)

        #expect(late.isEmpty)
        #expect(control.entry(1)?.state == .running)
    }

    @Test func whileFinishingOnlyTheWorkersReportMayFollow() throws {
        var control = try Self.control(in: .running)
        _ = try control.handle(.finishing(1, worker: Self.worker(control)), now: Self.now)
        #expect(Self.refusal(&control, .pause(1)) == FerryError.invalidState("The transfer is being moved into the library; it is about to complete."))
        #expect(Self.refusal(&control, .cancel(1, keepingPartFile: false))?.code == .invalidState)
        let done = try control.handle(.workerEnded(1, worker: Self.worker(control), Self.done), now: Self.now)
        #expect(done == [.journal(1, .completed(path: "/lib/f", sha256: "abc"))])
    }

    @Test func aPauseBeforeFinishingRefusesTheFinish() throws {
        var control = try Self.control(in: .running)
        let worker = Self.worker(control)
        _ = try control.handle(.pause(1), now: Self.now)
        #expect(Self.refusal(&control, .finishing(1, worker: worker))?.code == .invalidState)
    }

    /// A worker removed while it runs is forgotten when it lets go; its slot goes to the next.
    @Test func aRemovedTransferIsForgottenWhenItsWorkerLetsGo() throws {
        var control = try Self.control(in: .running)
        control.load(2, .init(state: .queued, session: "s"))
        let worker = Self.worker(control)
        _ = try control.handle(.remove(1), now: Self.now)
        #expect(control.running == 1)
        let ended = try control.handle(.workerEnded(1, worker: worker, .stopped), now: Self.now)
        #expect(Self.normalized(ended) == [.startWorker(2, worker: 0)])
        #expect(control.entry(1) == nil)
    }

    // MARK: - Failures and waiting

    @Test func failuresCountUpAndProgressStartsThemAgain() throws {
        var control = try Self.control(in: .waiting)
        #expect(control.entry(1)?.failures == 1)
        for expected in 2...3 {
            _ = try control.handle(.retryDue(1, timer: Self.timer(control)), now: Self.now)
            let actions = try control.handle(.workerEnded(1, worker: Self.worker(control), Self.busy), now: Self.now.addingTimeInterval(1))
            #expect(control.entry(1)?.failures == expected)
            // 10 s, 20 s, 40 s steps; half of each without jitter.
            #expect(actions.last == .armRetryTimer(1, timer: Self.timer(control), after: .seconds(5 << (expected - 1))))
        }
        _ = try control.handle(.retryDue(1, timer: Self.timer(control)), now: Self.now)
        let progressed = Control.WorkerReport.failed(.init(failure: Self.failure(status: 503), progressed: true, policy: Self.policy, unit: 0))
        _ = try control.handle(.workerEnded(1, worker: Self.worker(control), progressed), now: Self.now.addingTimeInterval(100))
        #expect(control.entry(1)?.failures == 1)
        #expect(control.entry(1)?.waitingSince == Self.now.addingTimeInterval(100))
    }

    @Test func theResourceTimeoutEndsTheWaiting() throws {
        var control = try Self.control(in: .waiting)
        _ = try control.handle(.retryDue(1, timer: Self.timer(control)), now: Self.now)
        // An hour later, the next try would come after the resource timeout.
        let actions = try control.handle(.workerEnded(1, worker: Self.worker(control), Self.busy), now: Self.now.addingTimeInterval(3595))
        guard case .journal(1, .failed(let failure)) = actions.first else {
            Issue.record("\(actions)")
            return
        }
        #expect(failure.failures == 2)
        let message = failure.error.message
        #expect(message.hasPrefix("Gave up after ") && message.contains("without progress (the resource timeout is "), "\(message)")
        #expect(control.entry(1)?.state == .failed)
        #expect(!control.isHeld(1))
    }

    @Test func theNetworksReturnWakesOnlyThoseWaitingForIt() throws {
        var control = Control(limits: .init(daemon: 0))
        let network = Control.WorkerReport.failed(.init(failure: Self.failure(status: 503, network: true), progressed: false, policy: Self.policy, unit: 0))
        for (id, report) in [(Int64(1), network), (2, Self.busy)] {
            _ = try control.handle(.limits(.init(daemon: 1)), now: Self.now)
            control.load(id, .init(state: .queued, session: "s"))
            _ = try control.handle(.scheduleDue, now: Self.now)
            _ = try control.handle(.limits(.init(daemon: 0)), now: Self.now)
            _ = try control.handle(.workerEnded(id, worker: control.entry(id)!.worker!, report), now: Self.now)
        }
        let actions = try control.handle(.networkBack, now: Self.now)
        #expect(actions == [.cancelRetryTimer(1), .journal(1, .queued(.retry))])
        #expect(control.entry(1)?.state == .queued)
        #expect(control.entry(2)?.state == .waiting)
        #expect(control.isHeld(2))
    }

    @Test func aStaleTimerIsIgnored() throws {
        var control = try Self.control(in: .waiting)
        let timer = Self.timer(control)
        _ = try control.handle(.resume(1), now: Self.now)
        let stale = try control.handle(.retryDue(1, timer: timer), now: Self.now)

        #expect(stale.isEmpty)
    }

    // MARK: - Recovery, a refusing journal, shutdown

    @Test func recoveryRequeuesRunningTransfersAndArmsWaitingOnesTimers() throws {
        var control = Control(limits: .init(daemon: 1))
        var waiting = Control.Entry(state: .waiting, session: "s")
        waiting.retryAt = Self.now.addingTimeInterval(30)
        control.load(3, waiting)
        control.load(2, .init(state: .running, session: "s"))
        control.load(1, .init(state: .paused, session: "s"))
        let actions = try control.handle(.started(control.limits), now: Self.now)
        // 2 goes back into the queue and starts at once: its start is journaled, not its return.
        #expect(Self.normalized(actions) == [.armRetryTimer(3, timer: 0, after: .seconds(30)), .startWorker(2, worker: 0)])
    }

    @Test func aRefusedPauseGivesARunningTransferBackToTheQueue() throws {
        var control = try Self.control(in: .running)
        let before = control.entry(1)!
        let worker = Self.worker(control)
        _ = try control.handle(.pause(1), now: Self.now)
        _ = try control.handle(.workerEnded(1, worker: worker, .stopped), now: Self.now)
        let restored = try control.handle(.restore(1, before), now: Self.now)
        #expect(Self.normalized(restored) == [.startWorker(1, worker: 0)])  // Its start is journaled.
        #expect(control.entry(1)?.state == .running)
    }

    @Test func aRefusedPauseGivesAWaitingTransferItsTimerBack() throws {
        var control = try Self.control(in: .waiting)
        let before = control.entry(1)!
        _ = try control.handle(.pause(1), now: Self.now)
        let restored = try control.handle(.restore(1, before), now: Self.now.addingTimeInterval(2))
        #expect(Self.normalized(restored) == [.armRetryTimer(1, timer: 0, after: .seconds(3))])
        #expect(control.entry(1)?.state == .waiting)
    }

    @Test func shutdownStopsEverythingAndStartsNothing() throws {
        var control = Control(limits: .init(daemon: 1))
        control.load(1, .init(state: .queued, session: "s"))
        control.load(2, .init(state: .queued, session: "s"))
        _ = try control.handle(.scheduleDue, now: Self.now)
        var waiting = Control.Entry(state: .waiting, session: "s")
        waiting.retryAt = Self.now
        control.load(3, waiting)
        _ = try control.handle(.started(control.limits), now: Self.now)
        let worker = control.entry(1)!.worker!
        let stopping = try control.handle(.shutdown, now: Self.now)

        #expect(stopping == [.stopWorker(1), .cancelRetryTimer(3)])
        // Cut by the stop: nothing journaled, nothing started; the next start requeues it.
        let cut = try control.handle(.workerEnded(1, worker: worker, Self.busy), now: Self.now)

        #expect(cut.isEmpty)
        let scheduled = try control.handle(.scheduleDue, now: Self.now)

        #expect(scheduled.isEmpty)
        #expect(control.entry(1)?.state == .running)
    }

    @Test func aFileMovedBeforeTheShutdownIsStillCompleted() throws {
        var control = try Self.control(in: .running)
        let worker = Self.worker(control)
        _ = try control.handle(.shutdown, now: Self.now)
        let completed = try control.handle(.workerEnded(1, worker: worker, Self.done), now: Self.now)

        #expect(completed == [.journal(1, .completed(path: "/lib/f", sha256: "abc"))])
    }
}

extension TransferControl {
    /// Takes in a transfer as the journal has it (``Input/loaded(_:)``).
    mutating func load(_ id: Int64, _ entry: Entry) {
        _ = try! handle(.loaded([(id: id, entry: entry)]), now: .distantPast)
    }
}
