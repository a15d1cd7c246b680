import FerryModel
import Foundation

extension TransferControl {
    /// A command's turn on its transfer: now, or after those that came before it.
    mutating func commandArrived(_ id: Int64, token: Int) -> [Action] {
        commands[id, default: []].append(token)
        return commands[id]?.count == 1 ? [.runCommand(token: token)] : []
    }

    /// The command running on the transfer is done: the next one's turn.
    mutating func commandDone(_ id: Int64) -> [Action] {
        guard var waiting = commands[id], !waiting.isEmpty else { return [] }
        waiting.removeFirst()
        commands[id] = waiting.isEmpty ? nil : waiting
        return waiting.first.map { [.runCommand(token: $0)] } ?? []
    }

    /// Back into the queue (a waiting one tries now), its failures forgotten.
    mutating func resume(_ id: Int64, startAfter: Date? = nil, now: Date) throws(FerryError) -> [Action] {
        try command(.resume, id, now: now, journal: .queued(startAfter.map { .resumedAfter($0) } ?? .resumed)) { entry in
            entry.failures = 0
            entry.waitingSince = nil
            entry.waitsForNetwork = false
            entry.retryAt = nil
            if let startAfter { entry.startAfter = startAfter }
        }
    }

    mutating func cancel(_ id: Int64, keepingPartFile keeping: Bool, now: Date) throws(FerryError) -> [Action] {
        try command(.cancel, id, now: now, journal: .cancelled(keepsPartFile: keeping)) { $0.keepsPartFile = keeping }
    }

    /// Resume data: it continues from its part file.
    mutating func reopen(_ id: Int64, now: Date) throws(FerryError) -> [Action] {
        try command(.reopen, id, now: now, journal: .queued(.reopened)) { entry in
            entry.keepsPartFile = false
            entry.failures = 0
            entry.waitingSince = nil
        }
    }

    /// Its options changed: a running transfer's worker stops, and the transfer starts again when
    /// it has let go (``workerEnded(_:worker:_:now:)``). One about to complete just completes.
    mutating func restart(_ id: Int64) throws(FerryError) -> [Action] {
        guard var entry = entries[id] else { throw FerryError.notFound(transfer: id) }
        guard entry.state == .running, entry.worker != nil, !entry.finishing, !entry.restarting else { return [] }
        entry.restarting = true
        entries[id] = entry
        return [.stopWorker(id)]
    }

    /// Forgets a transfer, cancelling it first if it is active or paused; its part file goes.
    mutating func remove(_ id: Int64, now: Date) throws(FerryError) -> [Action] {
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
    }

    /// A new priority, and or a place at the head or the tail of the queue.
    mutating func reorder(_ id: Int64, priority: Int?, position: TransferUpdate.Position?, now: Date) throws(FerryError) -> [Action] {
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
    }

    /// An exact priority and rank (``QueuePlacement``).
    mutating func place(_ id: Int64, priority: Int, rank: Int64, now: Date) throws(FerryError) -> [Action] {
        guard var entry = entries[id] else { throw FerryError.notFound(transfer: id) }
        guard !entry.state.isFinal || entry.state == .failed else {
            throw FerryError.invalidState("Transfer \(id) is \(entry.state.rawValue): it has no place in the queue.")
        }
        entry.priority = priority
        entry.rank = rank == id ? nil : rank
        return reordered(entry, id, now: now)
    }

    /// A command whose change could not be journaled: the entry as it was comes back.
    mutating func restore(_ id: Int64, _ before: Entry, now: Date) -> [Action] {
        var before = before
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
    }


    /// A person's command through the table: the new state, then its effects.
    mutating func command(
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
    mutating func apply(
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
    mutating func change(_ id: Int64, _ command: TransferLifecycle.Command, _ journal: TransferChange) -> [Action] {
        guard let state = entries[id]?.state, let transition = try? TransferLifecycle.transition(from: state, on: command),
            transition.changed
        else { return [] }
        // Scheduling is the caller's: once, after all the changes.
        var effects = transition
        effects.effects.removeAll { $0 == .schedule }
        return apply(effects, to: id, journal: journal, now: .distantPast)
    }
}
