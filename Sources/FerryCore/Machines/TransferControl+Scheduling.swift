import FerryModel
import Foundation

extension TransferControl {
    /// New limits; a schedule's window closed on running transfers: they stop and wait in the queue for the next.
    mutating func apply(_ limits: Limits, now: Date) -> [Action] {
        self.limits = limits
        // A schedule's window closed on them: they stop and wait in the queue for the next.
        var actions: [Action] = []
        for id in entries.working.keys.sorted() {
            guard let entry = entries[id], entry.state == .running, !entry.finishing, limits.holds(entry.session) else { continue }
            actions.append(.stopWorker(id))
        }
        return actions + schedule(now: now)
    }

    /// Graceful shutdown: every worker and timer stops, nothing more starts.
    mutating func shutDown() -> [Action] {
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


    /// Starts queued transfers that are due, in queue order, while slots are free: the daemon's
    /// and each session's. Keeps one timer for the earliest scheduled start.
    mutating func schedule(now: Date) -> [Action] {
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

    mutating func armTimer(_ id: Int64, after delay: Duration) -> Action {
        let token = takeToken()
        entries[id]?.timer = token
        return .armRetryTimer(id, timer: token, after: delay)
    }

    mutating func takeToken() -> Int {
        defer { nextToken += 1 }
        return nextToken
    }

    /// `entry` at its new place in the queue, journaled (nothing when it did not move).
    mutating func reordered(_ entry: Entry, _ id: Int64, now: Date) -> [Action] {
        guard entry.priority != entries[id]!.priority || entry.rank != entries[id]!.rank else { return [] }
        queue.remove(id, session: entry.session, startAfter: entry.startAfter)
        entries[id] = entry
        if entry.state == .queued { enqueue(id) }
        return [.journal(id, .reordered(priority: entry.priority, rank: entry.rank))] + schedule(now: now)
    }

    /// Inserts into the queue at its place (one with a start time waits among those until due).
    mutating func enqueue(_ id: Int64) {
        guard let entry = entries[id], runsHere(id) else { return }
        let entries = entries  // Read while the queue changes.
        let key = Self.order(id, entries)
        queue.insert(id, session: entry.session, startAfter: entry.startAfter) { Self.order($0, entries) < key }
    }

    /// Those whose start time has come join the queue in order.
    mutating func enqueueDue(now: Date) {
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

    static func order(_ id: Int64, _ entries: Entries) -> Place {
        let entry = entries[id]
        return Place(priority: entry?.priority ?? 0, rank: entry?.rank ?? id, id: id)
    }

    /// Finished transfers that nothing holds are forgotten (the journal has them).
    mutating func settle(_ id: Int64) {
        guard let entry = entries[id], entry.worker == nil, entry.timer == nil else { return }
        // In a cluster, one known only for a command is the shared queue's again.
        if entry.removed || entry.state == .completed || entry.state == .cancelled || !runsHere(id) { forget(id) }
    }

    mutating func forget(_ id: Int64) {
        if let entry = entries[id] { queue.remove(id, session: entry.session, startAfter: entry.startAfter) }
        entries[id] = nil
    }
}
