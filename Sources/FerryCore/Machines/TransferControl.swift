import FerryModel
import Foundation

/// The one owner of transfers' control: a pure state machine, in the style of AsyncHTTPClient's
/// connection-pool state machine. It takes commands (enqueue, pause, resume, cancel, remove,
/// reopen), workers' reports (finishing, ended) and timers (retry due, schedule due, network
/// back), and returns the actions that carry them out (journal a change, start or stop a worker,
/// arm or cancel a timer, delete a part file). ``TransferEngine`` only executes the actions;
/// workers only report. Every change of state goes through ``TransferLifecycle``'s table.
///
/// It knows every transfer that is not finished (queued, running, waiting, paused, failed) and
/// those a worker still holds. Finished ones it reads from the journal when a command names them
/// (``adopt(_:)``).
package struct TransferControl: Sendable {
    /// How many transfers run at once: in all, and per session.
    package struct Limits: Sendable, Hashable {
        package var daemon: Int
        package var sessions: [String: Int]
        /// Sessions whose schedule holds them now (``Self/everySession`` for the daemon's):
        /// nothing of theirs starts, and what runs stops and goes back to the queue.
        package var paused: Set<String>

        /// In ``paused``: every session's transfers.
        package static let everySession = "*"

        package init(daemon: Int, sessions: [String: Int] = [:], paused: Set<String> = []) {
            self.daemon = daemon
            self.sessions = sessions
            self.paused = paused
        }

        /// The session's transfers may not run now.
        func holds(_ session: String) -> Bool { paused.contains(Self.everySession) || paused.contains(session) }

        /// From the journaled options by session (the daemon's under
        /// ``TransferJournalKeys/daemonOptions``): their `maxConcurrent` (the daemon's default
        /// when it sets none), and the sessions held at `now`: by their schedule; while the
        /// network is `metered`, those that do not allow it (the daemon's `false`: every
        /// session); discretionary sessions outside the daemon's schedule's windows.
        init(options: [String: TransferOptions], maxConcurrent: Int, now: Date, metered: Bool = false) {
            let daemon = options[TransferJournalKeys.daemonOptions]
            let daemonState = daemon?.schedule?.state(at: now)
            var held = Set(options.filter { $0.value.schedule?.state(at: now).paused == true }.keys)
            if metered {
                // The daemon's key ("*") is the control's for every session.
                if daemon?.allowsMeteredNetwork == false { held.insert(Self.everySession) }
                held.formUnion(options.filter { $0.key != TransferJournalKeys.daemonOptions && $0.value.allowsMeteredNetwork == false }.keys)
            }
            if let daemonState, !daemonState.inWindow {
                held.formUnion(options.filter { $0.key != TransferJournalKeys.daemonOptions && $0.value.discretionary == true }.keys)
            }
            self.init(
                daemon: daemon?.maxConcurrent ?? maxConcurrent,
                sessions: options.filter { $0.key != TransferJournalKeys.daemonOptions }.compactMapValues(\.maxConcurrent),
                paused: held
            )
        }
    }

    /// What the control knows of one transfer.
    package struct Entry: Sendable, Hashable {
        package var state: TransferState
        package var session: String
        /// Not to start before this (a scheduled transfer).
        package var startAfter: Date?
        package var keepsPartFile = false
        /// Consecutive failed attempts, and since when it has gone without progress.
        package var failures = 0
        package var waitingSince: Date?
        package var retryAt: Date?
        package var waitsForNetwork = false
        /// The worker holding it (a token), running or stopping.
        package var worker: Int?
        /// Its retry timer (a token) while it waits.
        package var timer: Int?
        /// Its worker is moving the file into the library: only the worker's report may follow.
        package var finishing = false
        /// Removed: forgotten once no worker holds it.
        package var removed = false
        /// Its worker was asked to stop so that it starts again (``Input/restart(_:)``).
        package var restarting = false
        /// ``TransferPriority/rank`` and its place among its priority (nil: its id).
        package var priority = 0
        package var rank: Int64?

        package init(state: TransferState, session: String, startAfter: Date? = nil) {
            self.state = state
            self.session = session
            self.startAfter = startAfter
        }

        /// A transfer as the journal has it.
        init(_ record: TransferRecord) {
            self.init(state: record.state, session: record.session, startAfter: record.startAfter)
            keepsPartFile = record.keepsPartFile
            failures = record.failures
            waitingSince = record.waitingSince
            retryAt = record.retryAt
            waitsForNetwork = record.waitsForNetwork
            finishing = record.fileName != nil && record.state == .running
            priority = record.priority
            rank = record.queueRank
        }
    }

    package enum Input: Sendable {
        /// Transfers the journal has and the control does not know: at start (the last run's),
        /// or a finished one a command names. Nothing starts.
        case loaded([(id: Int64, entry: Entry)])
        /// The engine runs, with these limits: the last run's transfers that lost their worker
        /// go back into the queue, waiting ones get their timers, and what is due starts.
        case started(Limits)
        /// Transfers were journaled (or existing ones asked for again).
        case enqueued([(id: Int64, entry: Entry)])
        /// A person's command on a transfer arrived, with its token: it runs now
        /// (``Action/runCommand(_:)``), or once those that came before it on the transfer are done.
        case commandArrived(Int64, token: Int)
        /// The command running on the transfer is done (journaled, or undone): the next may run.
        case commandDone(Int64)
        case pause(Int64)
        case resume(Int64)
        /// Resumed to start no earlier than the date (URLSession's `earliestBeginDate`).
        case resumeAfter(Int64, Date)
        case cancel(Int64, keepingPartFile: Bool)
        case remove(Int64)
        /// Resume data: the transfer continues from its part file.
        case reopen(Int64)
        /// Its options changed: a running transfer starts again, from its durable bytes (one not
        /// running takes them at its next start).
        case restart(Int64)
        /// A new priority, and or a place at the head or the tail of the queue.
        case reorder(Int64, priority: Int?, position: TransferUpdate.Position?)
        /// An exact priority and rank (``QueuePlacement``).
        case place(Int64, priority: Int, rank: Int64)
        /// A command's change could not be journaled: the entry as it was comes back (a worker
        /// it stopped becomes a place in the queue, a timer it cancelled is armed again).
        case restore(Int64, Entry)
        /// At start: the move into the library that a crash interrupted is finished.
        case recoveredMove(Int64, path: String?, sha256: String?)
        /// The worker is about to move the file into the library.
        case finishing(Int64, worker: Int)
        /// The worker let go of the transfer, saying how its attempt ended.
        case workerEnded(Int64, worker: Int, WorkerReport)
        case retryDue(Int64, timer: Int)
        /// The earliest scheduled start has come.
        case scheduleDue
        /// A link, address or route came: transfers waiting for the network try now.
        case networkBack
        case limits(Limits)
        /// Graceful shutdown: stop every worker and timer, start nothing more.
        case shutdown
        /// In a cluster: transfers this member claimed from the shared queue (none: the claim
        /// failed). One its last member left running goes back into the queue; one waiting gets
        /// its timer.
        case claimed([(id: Int64, entry: Entry)])
        /// In a cluster: a claimed transfer whose move into the library its last member had
        /// made (recovery finished it, ``InterruptedMove``): it completes here and runs no more.
        case claimedMoved(Int64, Entry, path: String?, sha256: String?)
        /// In a cluster: slots may be free (a transfer queued anywhere, a worker ended, a
        /// moment passed): a claim for them, if one is due.
        case claimDue
        /// In a cluster: the claim on a transfer is lost (another member took it, or a command
        /// from another member changed it). Its worker or timer stops; nothing is journaled.
        case lost(Int64)
    }

    package enum WorkerReport: Sendable {
        /// It stopped when asked (its bytes checkpointed), or never started (the journal said no).
        case stopped
        /// `path`: the file in the library (for an upload, the file sent).
        case completed(path: String?, sha256: String?)
        case failed(AttemptReport)
    }

    /// A failed attempt, with what the decision to wait or fail needs.
    package struct AttemptReport: Sendable {
        var failure: AttemptFailure
        /// New bytes arrived in the attempt: the count of failures starts again.
        var progressed: Bool
        var policy: RetryPolicy
        /// A random number in 0..<1 for the backoff's jitter.
        var unit: Double

        init(failure: AttemptFailure, progressed: Bool, policy: RetryPolicy, unit: Double) {
            self.failure = failure
            self.progressed = progressed
            self.policy = policy
            self.unit = unit
        }
    }

    package enum Action: Sendable, Hashable {
        case journal(Int64, TransferChange)
        /// Journal `started`, then run a worker with this token.
        case startWorker(Int64, worker: Int)
        /// Ask the worker to let go; it reports `workerEnded` when it has.
        case stopWorker(Int64)
        case armRetryTimer(Int64, timer: Int, after: Duration)
        case cancelRetryTimer(Int64)
        /// Delete the part file (after the change that called for it is journaled).
        case deletePartFile(Int64)
        /// Wake the scheduler at this date (nil: no wake needed).
        case armScheduleTimer(Date?)
        /// Run the command with this token (``Input/commandArrived(_:token:)``).
        case runCommand(token: Int)
        /// In a cluster: claim up to `limit` transfers from the shared queue (each session under
        /// its limit across the cluster, none of a paused session's, none of `excluding`), then
        /// report them (``Input/claimed(_:)``, after any ``Input/claimedMoved(_:_:path:sha256:)``).
        case claim(limit: Int, sessions: [String: Int], paused: Set<String>, excluding: Set<Int64>)
        /// In a cluster: give the claim on the transfer back to the shared queue.
        case releaseLease(Int64)
    }

    package internal(set) var entries = Entries()
    package internal(set) var limits: Limits
    package internal(set) var isShutDown = false
    var queue = Queue()
    var nextToken = 1
    var scheduleTimer: Date?
    /// In a cluster, the transfers this member has claimed: only these are queued and started;
    /// others are known only while a command changes them. Nil on a single machine: every
    /// transfer is this daemon's.
    package internal(set) var leased: Set<Int64>?
    /// In a cluster: transfers whose claim was lost while a worker held them; the claim is given
    /// up once the worker lets go, and they are not claimed again before.
    var releasing: Set<Int64> = []
    /// In a cluster: a claim is under way (one at a time).
    var claiming = false
    /// Commands on each transfer, by token, in order of arrival: the first runs, the others wait
    /// for it (a command waits for a worker to let go, and for the journal).
    var commands: [Int64: [Int]] = [:]

    /// - Parameter shared: the queue is a cluster's: only claimed transfers run here.
    package init(limits: Limits, shared: Bool = false) {
        self.limits = limits
        leased = shared ? [] : nil
    }

    // MARK: - Reading

    package func entry(_ id: Int64) -> Entry? { entries[id] }

    /// A worker or a retry timer holds it.
    package func isHeld(_ id: Int64) -> Bool {
        entries[id].map { $0.worker != nil || $0.timer != nil } ?? false
    }

    /// Transfers a worker holds: these use the slots.
    package var running: Int { entries.working.count }

    /// Transfers waiting in the queue for a slot.
    package var queued: Int { queue.count }

    /// This daemon may run the transfer: on a single machine any, in a cluster a claimed one.
    package func runsHere(_ id: Int64) -> Bool { leased?.contains(id) ?? true }

    // MARK: - Loading

    /// Takes in a transfer the journal has and the control does not know. Nothing happens until
    /// an input names it.
    mutating func adopt(_ id: Int64, _ entry: Entry) {
        guard entries[id] == nil else { return }
        var entry = entry
        entry.worker = nil
        entry.timer = nil
        entries[id] = entry
        if entry.state == .queued { enqueue(id) }
    }

    /// The engine runs, with `limits`: the last run's running transfers lost their worker (they
    /// go back into the queue, keeping their order), waiting ones get their timers back.
    mutating func started(_ limits: Limits, now: Date) -> [Action] {
        self.limits = limits
        var actions: [Action] = []
        for (id, entry) in entries.sorted(where: { $0.worker == nil && $0.timer == nil && ($0.state == .running || $0.state == .waiting) }) {
            actions += takeBack(id, entry, now: now)
        }
        return actions + schedule(now: now)
    }

    /// A transfer that lost its worker or timer with its last run (or its last member): running,
    /// it goes back into the queue; waiting, it gets its timer back.
    mutating func takeBack(_ id: Int64, _ entry: Entry, now: Date) -> [Action] {
        switch entry.state {
        case .running:
            return change(id, .interrupt, .queued(.interrupted))
        case .waiting:
            return [armTimer(id, after: .seconds(max(0, entry.retryAt.map { $0.timeIntervalSince(now) } ?? 0)))]
        default:
            return []
        }
    }

    // MARK: - Inputs

    package mutating func handle(_ input: Input, now: Date) throws(FerryError) -> [Action] {
        // A finished transfer nothing holds is forgotten (the journal has it), whatever came of
        // the input: one a command read from the journal for the command, too.
        defer { if let id = input.transferID { settle(id) } }
        let actions = Self.journaledOnce(try dispatch(input, now: now))
        return actions + givingBack(after: actions)
    }

    /// A transfer put back into the queue and started in the same step is journaled once: its
    /// start (which the worker journals) says it all.
    static func journaledOnce(_ actions: [Action]) -> [Action] {
        let starting = Set(actions.compactMap { if case .startWorker(let id, _) = $0 { id } else { nil } })
        guard !starting.isEmpty else { return actions }
        return actions.filter { action in
            switch action {
            case .journal(let id, .queued(.retry)), .journal(let id, .queued(.interrupted)): !starting.contains(id)
            default: true
            }
        }
    }

    private mutating func dispatch(_ input: Input, now: Date) throws(FerryError) -> [Action] {
        switch input {
        case .loaded(let transfers):
            for (id, entry) in transfers { adopt(id, entry) }
            return []
        case .commandArrived(let id, let token):
            return commandArrived(id, token: token)
        case .commandDone(let id):
            return commandDone(id)
        case .started(let limits):
            return started(limits, now: now)
        case .enqueued(let transfers):
            for (id, entry) in transfers { adopt(id, entry) }
            return schedule(now: now)
        case .pause(let id):
            return try command(.pause, id, now: now, journal: .paused)
        case .resume(let id):
            return try resume(id, now: now)
        case .resumeAfter(let id, let date):
            return try resume(id, startAfter: date, now: now)
        case .cancel(let id, let keeping):
            return try cancel(id, keepingPartFile: keeping, now: now)
        case .remove(let id):
            return try remove(id, now: now)
        case .reopen(let id):
            return try reopen(id, now: now)
        case .restart(let id):
            return try restart(id)
        case .reorder(let id, let priority, let position):
            return try reorder(id, priority: priority, position: position, now: now)
        case .place(let id, let priority, let rank):
            return try place(id, priority: priority, rank: rank, now: now)
        case .restore(let id, let before):
            return restore(id, before, now: now)
        case .recoveredMove(let id, let path, let sha256):
            return recoveredMove(id, path: path, sha256: sha256)
        case .finishing(let id, let worker):
            return try finishing(id, worker: worker)
        case .workerEnded(let id, let worker, let report):
            return workerEnded(id, worker: worker, report, now: now)
        case .retryDue(let id, let timer):
            return retryDue(id, timer: timer, now: now)
        case .scheduleDue:
            scheduleTimer = nil
            return schedule(now: now)
        case .networkBack:
            return networkBack(now: now)
        case .limits(let limits):
            return apply(limits, now: now)
        case .claimed(let transfers):
            return claimed(transfers, now: now)
        case .claimedMoved(let id, let entry, let path, let sha256):
            return claimedMoved(id, entry, path: path, sha256: sha256, now: now)
        case .claimDue:
            return claimDue()
        case .lost(let id):
            return lost(id, now: now)
        case .shutdown:
            return shutDown()
        }
    }
}

extension TransferControl.Action {
    /// The transfer the action is about.
    package var transferID: Int64? {
        switch self {
        case .journal(let id, _), .startWorker(let id, _), .stopWorker(let id), .armRetryTimer(let id, _, _),
            .cancelRetryTimer(let id), .deletePartFile(let id):
            id
        case .releaseLease(let id):
            id
        case .armScheduleTimer, .claim, .runCommand:
            nil
        }
    }
}

extension Array {
    /// The first index whose element satisfies `belongs`, for a predicate false then true.
    func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if belongs(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

extension TransferControl.Input {
    /// The one transfer the input is about, if it is about one.
    var transferID: Int64? {
        switch self {
        case .pause(let id), .resume(let id), .resumeAfter(let id, _), .cancel(let id, _), .remove(let id), .reopen(let id), .restart(let id), .reorder(let id, _, _),
            .place(let id, _, _),
            .restore(let id, _), .recoveredMove(let id, _, _), .finishing(let id, _), .workerEnded(let id, _, _), .retryDue(let id, _),
            .claimedMoved(let id, _, _, _), .lost(let id), .commandDone(let id):
            id
        case .loaded, .started, .enqueued, .scheduleDue, .networkBack, .limits, .shutdown, .claimed, .claimDue, .commandArrived:
            nil
        }
    }
}
