import FerryModel
import Foundation

/// A cluster's member (``TransferControl/init(limits:shared:)`` with `shared`): it runs only the
/// transfers it has claimed from the shared queue, claims as many as it has free slots, and
/// gives back those it is done with; a lost claim stops its worker or timer.
extension TransferControl {
    /// Free slots: a claim for them, unless one is under way, the member is stopping, or a
    /// schedule holds every session.
    mutating func claimDue() -> [Action] {
        guard leased != nil, !claiming, !isShutDown, !limits.holds(Limits.everySession) else { return [] }
        let free = limits.daemon - running - queued
        guard free > 0 else { return [] }
        claiming = true
        return [.claim(limit: free, sessions: limits.sessions, paused: limits.paused, excluding: releasing)]
    }

    /// Transfers claimed from the shared queue (none: the claim failed). One its last member
    /// left running goes back into the queue; one waiting gets its timer.
    mutating func claimed(_ transfers: [(id: Int64, entry: Entry)], now: Date) -> [Action] {
        claiming = false
        var actions: [Action] = []
        for (id, entry) in transfers {
            forget(id)
            leased?.insert(id)
            adopt(id, entry)
            actions += takeBack(id, entry, now: now)
        }
        return actions + schedule(now: now)
    }

    /// A claimed transfer whose move into the library its last member had made completes here.
    mutating func claimedMoved(_ id: Int64, _ entry: Entry, path: String?, sha256: String?, now: Date) -> [Action] {
        forget(id)
        leased?.insert(id)
        adopt(id, entry)
        let actions = change(id, .complete, .completed(path: path, sha256: sha256))
        settle(id)
        return actions.isEmpty ? takeBack(id, entry, now: now) + schedule(now: now) : actions + schedule(now: now)
    }

    /// A lost claim (another member took the transfer, or a command from another member changed
    /// it) stops its worker or timer; nothing is journaled. The claim is given up at once, or
    /// once the worker has let go (till then it is not claimed again here).
    mutating func lost(_ id: Int64, now: Date) -> [Action] {
        guard leased?.contains(id) == true else { return [] }
        let entry = entries[id]
        var actions: [Action] = []
        if entry?.timer != nil { actions.append(.cancelRetryTimer(id)) }
        if entry?.worker != nil {
            actions.append(.stopWorker(id))
            releasing.insert(id)
        } else {
            actions.append(.releaseLease(id))
        }
        forget(id)
        leased?.remove(id)
        return actions + schedule(now: now)
    }

    /// The claims on the transfers `actions` changed that left the queue here (paused, failed,
    /// finished, removed) once nothing holds them: given back after the changes are journaled.
    mutating func givingBack(after actions: [Action]) -> [Action] {
        guard leased != nil else { return [] }
        var released: [Action] = []
        for id in Set(actions.compactMap(\.transferID)).sorted() where leased?.contains(id) == true {
            if let entry = entries[id] {
                if entry.worker != nil || entry.timer != nil { continue }
                if !entry.removed, TransferJournalKeys.claimedStates.contains(entry.state) { continue }
            }
            forget(id)
            leased?.remove(id)
            released.append(.releaseLease(id))
        }
        return released
    }
}
