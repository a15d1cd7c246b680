import FerryKit
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
public struct TransferControl: Sendable {
    /// How many transfers run at once: in all, and per session.
    public struct Limits: Sendable, Hashable {
        public var daemon: Int
        public var sessions: [String: Int]
        /// Sessions whose schedule holds them now (``Self/everySession`` for the daemon's):
        /// nothing of theirs starts, and what runs stops and goes back to the queue.
        public var paused: Set<String>

        /// In ``paused``: every session's transfers.
        public static let everySession = "*"

        public init(daemon: Int, sessions: [String: Int] = [:], paused: Set<String> = []) {
            self.daemon = daemon
            self.sessions = sessions
            self.paused = paused
        }

        /// The session's transfers may not run now.
        func holds(_ session: String) -> Bool { paused.contains(Self.everySession) || paused.contains(session) }
    }

    /// What the control knows of one transfer.
    public struct Entry: Sendable, Hashable {
        public var state: TransferState
        public var session: String
        /// Not to start before this (a scheduled transfer).
        public var startAfter: Date?
        public var keepsPartFile = false
        /// Consecutive failed attempts, and since when it has gone without progress.
        public var failures = 0
        public var waitingSince: Date?
        public var retryAt: Date?
        public var waitsForNetwork = false
        /// The worker holding it (a token), running or stopping.
        public var worker: Int?
        /// Its retry timer (a token) while it waits.
        public var timer: Int?
        /// Its worker is moving the file into the library: only the worker's report may follow.
        public var finishing = false
        /// Removed: forgotten once no worker holds it.
        public var removed = false
        /// ``TransferPriority/rank`` and its place among its priority (nil: its id).
        public var priority = 0
        public var rank: Int64?

        public init(state: TransferState, session: String, startAfter: Date? = nil) {
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

    public enum Input: Sendable {
        /// Transfers were journaled (or existing ones asked for again).
        case enqueued([(id: Int64, entry: Entry)])
        case pause(Int64)
        case resume(Int64)
        case cancel(Int64, keepingPartFile: Bool)
        case remove(Int64)
        /// Resume data: the transfer continues from its part file.
        case reopen(Int64)
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
        /// In a cluster: transfers this member claimed from the shared queue. One its last
        /// member left running goes back into the queue; one waiting gets its timer.
        case claimed([(id: Int64, entry: Entry)])
        /// In a cluster: a claimed transfer whose move into the library its last member had
        /// made (recovery finished it, ``InterruptedMove``): it completes here and runs no more.
        case claimedMoved(Int64, Entry, path: String?, sha256: String?)
        /// In a cluster: the claim on a transfer is lost (another member took it, or a command
        /// from another member changed it). Its worker or timer stops; nothing is journaled.
        case lost(Int64)
    }

    public enum WorkerReport: Sendable {
        /// It stopped when asked (its bytes checkpointed), or never started (the journal said no).
        case stopped
        /// `path`: the file in the library (for an upload, the file sent).
        case completed(path: String?, sha256: String?)
        case failed(AttemptReport)
    }

    /// A failed attempt, with what the decision to wait or fail needs.
    public struct AttemptReport: Sendable {
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

    public enum Action: Sendable, Hashable {
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
    }

    public private(set) var entries = Entries()
    /// Setting them starts nothing; the `limits` input does (at start, before recovery, nothing
    /// may start yet).
    public var limits: Limits
    public private(set) var isShutDown = false
    private var queue = Queue()
    private var nextToken = 1
    private var scheduleTimer: Date?
    /// In a cluster, the transfers this member has claimed: only these are queued and started;
    /// others are known only while a command changes them. Nil on a single machine: every
    /// transfer is this daemon's.
    public private(set) var leased: Set<Int64>?

    /// - Parameter shared: the queue is a cluster's: only claimed transfers run here.
    public init(limits: Limits, shared: Bool = false) {
        self.limits = limits
        leased = shared ? [] : nil
    }

    // MARK: - Reading

    public func entry(_ id: Int64) -> Entry? { entries[id] }

    /// A worker or a retry timer holds it.
    public func isHeld(_ id: Int64) -> Bool {
        entries[id].map { $0.worker != nil || $0.timer != nil } ?? false
    }

    /// Transfers a worker holds: these use the slots.
    public var running: Int { entries.working.count }

    /// Transfers waiting in the queue for a slot.
    public var queued: Int { queue.count }

    /// This daemon may run the transfer: on a single machine any, in a cluster a claimed one.
    public func runsHere(_ id: Int64) -> Bool { leased?.contains(id) ?? true }

    // MARK: - Loading

    /// Forgets a transfer that is finished and held by nothing (one a command read from the
    /// journal and left as it was).
    public mutating func tidy(_ id: Int64) { settle(id) }

    /// In a cluster: forgets a transfer this member no longer works on (its claim given back,
    /// or lost); nothing must hold it.
    public mutating func release(_ id: Int64) {
        forget(id)
        leased?.remove(id)
    }

    /// Takes in a transfer the journal has and the control does not know (at start, or when a
    /// command names a finished one). Nothing happens until an input names it.
    public mutating func adopt(_ id: Int64, _ entry: Entry) {
        guard entries[id] == nil else { return }
        var entry = entry
        entry.worker = nil
        entry.timer = nil
        entries[id] = entry
        if entry.state == .queued { enqueue(id) }
    }

    /// After a start, once the last run's transfers are adopted: running ones lost their worker
    /// (they go back into the queue, keeping their order), waiting ones get their timers back.
    public mutating func recover(now: Date) -> [Action] {
        var actions: [Action] = []
        for (id, entry) in entries.sorted(where: { $0.worker == nil && $0.timer == nil && ($0.state == .running || $0.state == .waiting) }) {
            actions += takeBack(id, entry, now: now)
        }
        return actions + schedule(now: now)
    }

    /// A transfer that lost its worker or timer with its last run (or its last member): running,
    /// it goes back into the queue; waiting, it gets its timer back.
    private mutating func takeBack(_ id: Int64, _ entry: Entry, now: Date) -> [Action] {
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

    public mutating func handle(_ input: Input, now: Date) throws(FerryError) -> [Action] {
        switch input {
        case .enqueued(let transfers):
            for (id, entry) in transfers { adopt(id, entry) }
            return schedule(now: now)

        case .pause(let id):
            return try command(.pause, id, now: now, journal: .paused)

        case .resume(let id):
            return try command(.resume, id, now: now, journal: .queued(.resumed)) { entry in
                entry.failures = 0
                entry.waitingSince = nil
                entry.waitsForNetwork = false
                entry.retryAt = nil
            }

        case .cancel(let id, let keeping):
            return try command(.cancel, id, now: now, journal: .cancelled(keepsPartFile: keeping)) { entry in
                entry.keepsPartFile = keeping
            }

        case .remove(let id):
            guard let entry = entries[id] else { throw FerryError.notFound(transfer: id) }
            var actions: [Action] = []
            if entry.state.isActive || entry.state == .paused {
                actions += try command(.cancel, id, now: now, journal: .cancelled(keepsPartFile: false)) { $0.keepsPartFile = false }
            }
            actions.append(.journal(id, .removed))
            if !actions.contains(.deletePartFile(id)) { actions.append(.deletePartFile(id)) }
            if entries[id] != nil {
                entries[id]?.removed = true
                settle(id)  // Forgotten now, or when its worker lets go.
            }
            return actions

        case .reopen(let id):
            return try command(.reopen, id, now: now, journal: .queued(.reopened)) { entry in
                entry.keepsPartFile = false
                entry.failures = 0
                entry.waitingSince = nil
            }

        case .reorder(let id, let priority, let position):
            guard var entry = entries[id] else { throw FerryError.notFound(transfer: id) }
            guard !entry.state.isFinal || entry.state == .failed else {
                throw FerryError.invalidState("Transfer \(id) is \(entry.state.rawValue): it has no place in the queue.")
            }
            // Ahead of (or behind) every other queued transfer: its priority raised (lowered) to
            // theirs where needed, its rank below (above) theirs.
            let others = queue.all.filter { $0 != id }
            let priorities = others.compactMap { entries[$0]?.priority }
            let ranks = others.map { entries[$0]?.rank ?? $0 }
            if let priority { entry.priority = priority }
            switch position {
            case .first?:
                entry.priority = max(entry.priority, priorities.max() ?? entry.priority)
                entry.rank = (ranks.min() ?? id) - 1
            case .last?:
                entry.priority = min(entry.priority, priorities.min() ?? entry.priority)
                entry.rank = (ranks.max() ?? id) + 1
            case nil:
                break
            }
            return reordered(entry, id, now: now)

        case .place(let id, let priority, let rank):
            guard var entry = entries[id] else { throw FerryError.notFound(transfer: id) }
            guard !entry.state.isFinal || entry.state == .failed else {
                throw FerryError.invalidState("Transfer \(id) is \(entry.state.rawValue): it has no place in the queue.")
            }
            entry.priority = priority
            entry.rank = rank == id ? nil : rank
            return reordered(entry, id, now: now)

        case .restore(let id, var before):
            guard let current = entries[id] else { return [] }
            before.worker = current.worker
            before.timer = current.timer
            before.removed = current.removed
            before.finishing = current.finishing
            queue.remove(id, session: current.session, startAfter: current.startAfter)
            entries[id] = before
            if before.state == .queued { enqueue(id) }
            switch before.state {
            case .running where before.worker == nil:
                return change(id, .interrupt, .queued(.interrupted)) + schedule(now: now)
            case .waiting where before.timer == nil:
                let delay = Duration.seconds(max(0, before.retryAt.map { $0.timeIntervalSince(now) } ?? 0))
                return [armTimer(id, after: delay)]
            default:
                return schedule(now: now)
            }

        case .recoveredMove(let id, let path, let sha256):
            guard entries[id]?.worker == nil else { return [] }
            let actions = change(id, .complete, .completed(path: path, sha256: sha256))
            settle(id)
            return actions

        case .finishing(let id, let worker):
            guard entries[id]?.worker == worker, entries[id]?.state == .running else {
                throw FerryError.invalidState("The transfer is no longer running.")
            }
            entries[id]?.finishing = true
            return []

        case .workerEnded(let id, let worker, let report):
            return workerEnded(id, worker: worker, report, now: now)

        case .retryDue(let id, let timer):
            guard entries[id]?.timer == timer else { return [] }
            entries[id]?.timer = nil
            guard entries[id]?.state == .waiting else { return schedule(now: now) }
            return change(id, .retry, .queued(.retry)) + schedule(now: now)

        case .scheduleDue:
            scheduleTimer = nil
            return schedule(now: now)

        case .networkBack:
            var actions: [Action] = []
            for (id, _) in entries.sorted(mayRest: false, where: { $0.state == .waiting && $0.waitsForNetwork }) {
                actions += change(id, .retry, .queued(.retry))
            }
            return actions + schedule(now: now)

        case .limits(let limits):
            self.limits = limits
            // A schedule's window closed on them: they stop and wait in the queue for the next.
            var actions: [Action] = []
            for id in entries.working.keys.sorted() {
                guard let entry = entries[id], entry.state == .running, !entry.finishing, limits.holds(entry.session) else { continue }
                actions.append(.stopWorker(id))
            }
            return actions + schedule(now: now)

        case .claimed(let transfers):
            var actions: [Action] = []
            for (id, entry) in transfers {
                forget(id)
                leased?.insert(id)
                adopt(id, entry)
                actions += takeBack(id, entry, now: now)
            }
            return actions + schedule(now: now)

        case .claimedMoved(let id, let entry, let path, let sha256):
            forget(id)
            leased?.insert(id)
            adopt(id, entry)
            let actions = change(id, .complete, .completed(path: path, sha256: sha256))
            settle(id)
            return actions.isEmpty ? takeBack(id, entry, now: now) + schedule(now: now) : actions + schedule(now: now)

        case .lost(let id):
            guard let entry = entries[id] else {
                leased?.remove(id)
                return []
            }
            var actions: [Action] = []
            if entry.worker != nil { actions.append(.stopWorker(id)) }
            if entry.timer != nil { actions.append(.cancelRetryTimer(id)) }
            release(id)
            return actions + schedule(now: now)

        case .shutdown:
            isShutDown = true
            var actions: [Action] = []
            for (id, entry) in entries.sorted(mayRest: false, where: { $0.worker != nil || $0.timer != nil }) {
                if entry.worker != nil { actions.append(.stopWorker(id)) }
                if entry.timer != nil {
                    entries[id]?.timer = nil
                    actions.append(.cancelRetryTimer(id))
                }
            }
            if scheduleTimer != nil {
                scheduleTimer = nil
                actions.append(.armScheduleTimer(nil))
            }
            return actions
        }
    }

    // MARK: - Commands

    /// A person's command through the table: the new state, then its effects.
    private mutating func command(
        _ command: TransferLifecycle.Command, _ id: Int64, now: Date, journal: TransferChange,
        adjust: (inout Entry) -> Void = { _ in }
    ) throws(FerryError) -> [Action] {
        guard let entry = entries[id] else { throw FerryError.notFound(transfer: id) }
        let transition = try TransferLifecycle.transition(from: entry.state, on: command, finishing: entry.finishing)
        guard transition.changed else { return [] }
        return apply(transition, to: id, journal: journal, adjust: adjust, now: now)
    }

    /// Applies a changed transition: the state, then stopping (before the journal, so that the
    /// worker's last checkpoint comes first and the change's event carries every byte on disk),
    /// the journal, the part file and the queue.
    private mutating func apply(
        _ transition: TransferLifecycle.Transition, to id: Int64, journal: TransferChange,
        adjust: (inout Entry) -> Void = { _ in }, now: Date
    ) -> [Action] {
        guard var entry = entries[id] else { return [] }
        var actions: [Action] = []
        let wasQueued = entry.state == .queued
        entry.state = transition.state
        adjust(&entry)
        if transition.effects.contains(.stopWorker) {
            if entry.worker != nil { actions.append(.stopWorker(id)) }
            if entry.timer != nil {
                entry.timer = nil
                actions.append(.cancelRetryTimer(id))
            }
        }
        actions.append(.journal(id, journal))
        // After the journal: a change the journal refuses leaves the bytes where they were. A
        // worker still holding the file writes into an unlinked file; nothing reopens it.
        if transition.effects.contains(.deletePartFile), !entry.keepsPartFile {
            actions.append(.deletePartFile(id))
        }
        entries[id] = entry
        if wasQueued, entry.state != .queued { queue.remove(id, session: entry.session, startAfter: entry.startAfter) }
        if !wasQueued, entry.state == .queued { enqueue(id) }
        settle(id)
        if transition.effects.contains(.schedule) { actions += schedule(now: now) }
        return actions
    }

    /// A change the control makes itself (retry, interrupt): the table, then the journal.
    private mutating func change(_ id: Int64, _ command: TransferLifecycle.Command, _ journal: TransferChange) -> [Action] {
        guard let state = entries[id]?.state, let transition = try? TransferLifecycle.transition(from: state, on: command),
            transition.changed
        else { return [] }
        // Scheduling is the caller's: once, after all the changes.
        var effects = transition
        effects.effects.removeAll { $0 == .schedule }
        return apply(effects, to: id, journal: journal, now: .distantPast)
    }

    // MARK: - Workers

    private mutating func workerEnded(_ id: Int64, worker: Int, _ report: WorkerReport, now: Date) -> [Action] {
        guard var entry = entries[id], entry.worker == worker else { return [] }
        entry.worker = nil
        entry.finishing = false
        entries[id] = entry
        var actions: [Action] = []
        if entry.state == .running, !entry.removed {
            // The worker's own outcome: nothing else changed the transfer meanwhile.
            switch report {
            case .completed(let path, let sha256):
                actions += change(id, .complete, .completed(path: path, sha256: sha256))
            case .failed(let attempt) where !isShutDown:
                actions += failed(id, attempt, now: now)
            case .stopped where !isShutDown:
                // Not asked to stop: its start could not be journaled. Back into the queue, and
                // not started again for a second, so that a failing journal is not a busy loop.
                entries[id]?.startAfter = max(entry.startAfter ?? now, now.addingTimeInterval(1))
                actions += change(id, .interrupt, .queued(.interrupted))
            case .failed, .stopped:
                break  // Cut by the shutdown: the next start puts it back into the queue.
            }
        }
        settle(id)
        return actions + schedule(now: now)
    }

    /// Waits (if waiting can mend it and the resource timeout allows) or fails.
    private mutating func failed(_ id: Int64, _ attempt: AttemptReport, now: Date) -> [Action] {
        guard var entry = entries[id] else { return [] }
        let failure = attempt.failure
        entry.failures = attempt.progressed ? 1 : entry.failures + 1
        if attempt.progressed || entry.waitingSince == nil { entry.waitingSince = now }
        let since = entry.waitingSince ?? now
        let waited = Duration.seconds(now.timeIntervalSince(since))
        let delay = failure.retryable
            ? attempt.policy.delay(afterFailures: entry.failures, retryAfter: failure.retryAfter, unit: attempt.unit, waited: waited) : nil
        if let delay {
            entry.retryAt = now.addingTimeInterval(delay / .seconds(1))
            entry.waitsForNetwork = failure.waitsForNetwork
            entries[id] = entry
            let wait = TransferChange.Wait(
                failures: entry.failures, waitingSince: since, retryAt: entry.retryAt!, reason: failure.reason,
                forNetwork: failure.waitsForNetwork, error: failure.error.info
            )
            var actions = change(id, .wait, .waiting(wait))
            if !isShutDown { actions.append(armTimer(id, after: delay)) }
            return actions
        }
        entry.retryAt = nil
        entry.waitsForNetwork = false
        entries[id] = entry
        let error = TransferErrorInfo(
            code: failure.error.code.rawValue,
            message: Self.giveUp(failure, failures: entry.failures, waited: waited, policy: attempt.policy)
        )
        return change(id, .fail, .failed(.init(failures: entry.failures, waitingSince: entry.waitingSince, error: error)))
    }

    /// Why a transfer stops trying: the failure itself, or the limit that ended the waiting.
    static func giveUp(_ failure: AttemptFailure, failures: Int, waited: Duration, policy: RetryPolicy) -> String {
        guard failure.retryable else { return failure.error.message }
        if let maxAttempts = policy.maxAttempts, failures >= maxAttempts {
            return "Gave up after \(failures) failed attempts. Last error: \(failure.error.message)"
        }
        if let retryAfter = failure.retryAfter, retryAfter > policy.maxRetryAfter {
            return "The server asks to wait \(DurationText.describe(retryAfter)), longer than Ferry waits (\(DurationText.describe(policy.maxRetryAfter))). \(failure.error.message)"
        }
        return "Gave up after \(DurationText.describe(waited)) without progress (the resource timeout is \(DurationText.describe(policy.resourceTimeout))). Last error: \(failure.error.message)"
    }

    // MARK: - Scheduling

    /// Starts queued transfers that are due, in queue order, while slots are free: the daemon's
    /// and each session's. Keeps one timer for the earliest scheduled start.
    private mutating func schedule(now: Date) -> [Action] {
        guard !isShutDown else { return [] }
        enqueueDue(now: now)
        var actions: [Action] = []
        var running = 0
        var perSession: [String: Int] = [:]
        for session in entries.working.values {
            running += 1
            perSession[session, default: 0] += 1
        }
        // Sessions that may start one now, with how many of theirs are queued and not yet looked
        // at: the walk ends when none is left (a held session's queue is not walked at all).
        func mayStart(_ session: String) -> Bool {
            !limits.holds(session) && (limits.sessions[session].map { perSession[session, default: 0] < $0 } ?? true)
        }
        var unseen = queue.perSession.filter { mayStart($0.key) }
        var left = unseen.values.reduce(0, +)
        var started: [(id: Int64, session: String)] = []
        for id in queue.ids {
            // Full: nothing more can start, and a worker's end schedules again. A long queue is
            // not walked.
            if running >= limits.daemon || left == 0 { break }
            guard let entry = entries[id], let waiting = unseen[entry.session] else { continue }
            unseen[entry.session] = waiting - 1
            left -= 1
            guard entry.worker == nil else { continue }
            running += 1
            perSession[entry.session, default: 0] += 1
            started.append((id, entry.session))
            if !mayStart(entry.session) {  // Its session is full now: the rest of its queue waits.
                left -= unseen[entry.session] ?? 0
                unseen[entry.session] = nil
            }
        }
        for (id, _) in started {
            let token = takeToken()
            entries[id]?.state = (try? TransferLifecycle.transition(from: .queued, on: .start).state) ?? .running
            entries[id]?.worker = token
            entries[id]?.finishing = false
            actions.append(.startWorker(id, worker: token))
        }
        queue.remove(started: started)
        let nextStart = queue.nextStart
        if nextStart != scheduleTimer {
            scheduleTimer = nextStart
            actions.append(.armScheduleTimer(nextStart))
        }
        return actions
    }

    private mutating func armTimer(_ id: Int64, after delay: Duration) -> Action {
        let token = takeToken()
        entries[id]?.timer = token
        return .armRetryTimer(id, timer: token, after: delay)
    }

    private mutating func takeToken() -> Int {
        defer { nextToken += 1 }
        return nextToken
    }

    /// `entry` at its new place in the queue, journaled (nothing when it did not move).
    private mutating func reordered(_ entry: Entry, _ id: Int64, now: Date) -> [Action] {
        guard entry.priority != entries[id]!.priority || entry.rank != entries[id]!.rank else { return [] }
        queue.remove(id, session: entry.session, startAfter: entry.startAfter)
        entries[id] = entry
        if entry.state == .queued { enqueue(id) }
        return [.journal(id, .reordered(priority: entry.priority, rank: entry.rank))] + schedule(now: now)
    }

    /// Inserts into the queue at its place (one with a start time waits among those until due).
    private mutating func enqueue(_ id: Int64) {
        guard let entry = entries[id], runsHere(id) else { return }
        let entries = entries  // Read while the queue changes.
        let key = Self.order(id, entries)
        queue.insert(id, session: entry.session, startAfter: entry.startAfter) { Self.order($0, entries) < key }
    }

    /// Those whose start time has come join the queue in order.
    private mutating func enqueueDue(now: Date) {
        let due = queue.takeDue(now: now).compactMap { id in entries[id].map { (id: id, session: $0.session) } }
        guard !due.isEmpty else { return }
        let known = entries
        queue.insertReady(due) { Self.order($0, known) }
    }

    /// Where a transfer stands in the queue: by priority (higher first), rank, id.
    struct Place: Comparable {
        var priority: Int
        var rank: Int64
        var id: Int64
        static func < (a: Place, b: Place) -> Bool { (-a.priority, a.rank, a.id) < (-b.priority, b.rank, b.id) }
    }

    private static func order(_ id: Int64, _ entries: Entries) -> Place {
        let entry = entries[id]
        return Place(priority: entry?.priority ?? 0, rank: entry?.rank ?? id, id: id)
    }

    /// Finished transfers that nothing holds are forgotten (the journal has them).
    private mutating func settle(_ id: Int64) {
        guard let entry = entries[id], entry.worker == nil, entry.timer == nil else { return }
        // In a cluster, one known only for a command is the shared queue's again.
        if entry.removed || entry.state == .completed || entry.state == .cancelled || !runsHere(id) { forget(id) }
    }

    private mutating func forget(_ id: Int64) {
        if let entry = entries[id] { queue.remove(id, session: entry.session, startAfter: entry.startAfter) }
        entries[id] = nil
    }
}

extension TransferControl.Action {
    /// The transfer the action is about.
    public var transferID: Int64? {
        switch self {
        case .journal(let id, _), .startWorker(let id, _), .stopWorker(let id), .armRetryTimer(let id, _, _),
            .cancelRetryTimer(let id), .deletePartFile(let id):
            id
        case .armScheduleTimer:
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
