/// Putting a waiting transfer at an exact place in the queue (aria2's `changePosition`): the
/// priority and rank it takes, and those the transfers ahead of it must take so that the order
/// is exactly the one asked for. The queue's order is (higher priority, lower rank, lower id);
/// a transfer never moved ranks as its id. No rank goes up, so a transfer added later (a higher
/// id) still goes last. Pure.
package enum QueuePlacement {
    package struct Place: Sendable, Hashable {
        package var id: Int64
        package var priority: Int
        /// Its rank, or its id when it has none.
        package var rank: Int64

        package init(id: Int64, priority: Int, rank: Int64?) {
            self.id = id
            self.priority = priority
            self.rank = rank ?? id
        }

        package init(_ record: TransferRecord) {
            self.init(id: record.transferId, priority: record.priority, rank: record.queueRank)
        }

        var key: (Int, Int64, Int64) { (-priority, rank, id) }
    }

    /// `places` in the order the queue runs them.
    package static func sorted(_ places: [Place]) -> [Place] {
        places.sorted { $0.key < $1.key }
    }

    /// The new places of `id` moved to `index` of `order` (0 is the head; past the end, the
    /// tail) and of those ahead that must step further ahead, in the order to write them: those
    /// ahead first, the moved one last. Empty when it is at that place already.
    package static func moves(_ order: [Place], moving id: Int64, to index: Int) -> [Place] {
        guard let from = order.firstIndex(where: { $0.id == id }) else { return [] }
        let others = order.filter { $0.id != id }
        let index = min(max(0, index), others.count)
        if index == from { return [] }
        // Just ahead of the one now at `index`, in its priority; at the tail, in the last one's
        // priority with its rank (never a higher one, which a later transfer's id could pass).
        let placed: Place
        if index < others.count {
            let next = others[index]
            placed = Place(id: id, priority: next.priority, rank: just(ahead: next, id))
        } else {
            placed = Place(id: id, priority: others[index - 1].priority, rank: others[index - 1].rank)
        }
        // Those ahead of the place, in the same priority, whose turn is not before it: one step
        // further ahead each, until one already is.
        var changes: [Place] = []
        var bound = placed
        for ahead in others[..<index].reversed() {
            guard ahead.priority == placed.priority, !(ahead.key < bound.key) else { break }
            bound = Place(id: ahead.id, priority: ahead.priority, rank: just(ahead: bound, ahead.id))
            changes.append(bound)
        }
        return changes.reversed() + [placed]
    }

    /// The rank `id` needs to come just ahead of `place` (ties go to the lower id).
    private static func just(ahead place: Place, _ id: Int64) -> Int64 {
        id < place.id ? place.rank : place.rank - 1
    }
}
