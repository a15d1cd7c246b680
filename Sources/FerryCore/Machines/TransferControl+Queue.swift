import Foundation

extension TransferControl {
    /// Queued transfers: those that may start, in queue order (higher priority first, then rank:
    /// its id unless it was moved, so a transfer keeps its place), with how many each session
    /// has; and those with a start time, by that time. Scheduling walks only the first kind, and
    /// stops once no session with queued transfers may start one, so half a million in a session
    /// a schedule holds, or half a million set to start tomorrow, are not walked at every input;
    /// one timer waits for the earliest start time.
    struct Queue: Sendable {
        private(set) var ids: [Int64] = []
        private(set) var perSession: [String: Int] = [:]
        /// Queued transfers with a start time, by that time (seconds since the reference date),
        /// then id. Due ones move to ``ids`` at the next scheduling.
        private var timed: [Timed] = []

        struct Timed: Sendable, Comparable {
            var at: Double
            var id: Int64
            static func < (a: Timed, b: Timed) -> Bool { (a.at, a.id) < (b.at, b.id) }
        }

        /// Every queued transfer, whether it may start now or later.
        var count: Int { ids.count + timed.count }

        /// Every queued transfer's id: those that may start, in order, then those with a start time.
        var all: [Int64] { ids + timed.map(\.id) }

        /// The earliest start time among those waiting for theirs.
        var nextStart: Date? { timed.first.map { Date(timeIntervalSinceReferenceDate: $0.at) } }

        /// Puts `id` at its place, unless it is there already: with a start time, among those
        /// waiting for theirs; else in queue order.
        /// - Parameter precedes: whether a queued transfer goes before this one.
        mutating func insert(_ id: Int64, session: String, startAfter: Date?, precedes: (Int64) -> Bool) {
            guard let startAfter else { return insertReady(id, session: session, precedes: precedes) }
            let key = Timed(at: startAfter.timeIntervalSinceReferenceDate, id: id)
            // Most come last (the same time for a whole batch, newer ids): no search.
            let goesLast = timed.last.map { $0 < key } ?? true
            let index = goesLast ? timed.count : timed.partitioningIndex { !($0 < key) }
            guard index == timed.count || timed[index] != key else { return }
            timed.insert(key, at: index)
        }

        /// Puts `id` at its place in queue order.
        mutating func insertReady(_ id: Int64, session: String, precedes: (Int64) -> Bool) {
            // Most come last (the same priority, a newer id): no search.
            let goesLast = ids.last.map(precedes) ?? true
            let index = goesLast ? ids.count : ids.partitioningIndex { !precedes($0) }
            guard index == ids.count || ids[index] != id else { return }
            ids.insert(id, at: index)
            perSession[session, default: 0] += 1
        }

        /// Puts many at their places at once (each with its session): sorted, then merged with
        /// the queue in one pass, not one search and insert each.
        /// - Parameter order: a transfer's place in queue order (ids in the queue included).
        mutating func insertReady<Key: Comparable>(_ batch: [(id: Int64, session: String)], order: (Int64) -> Key) {
            guard !batch.isEmpty else { return }
            let sorted = batch.map { (key: order($0.id), id: $0.id, session: $0.session) }.sorted { $0.key < $1.key }
            for item in sorted { perSession[item.session, default: 0] += 1 }
            if let last = ids.last, let first = sorted.first, order(last) > first.key {
                var merged: [Int64] = []
                merged.reserveCapacity(ids.count + sorted.count)
                var i = 0, j = 0
                while i < ids.count || j < sorted.count {
                    if j == sorted.count || (i < ids.count && order(ids[i]) <= sorted[j].key) {
                        merged.append(ids[i])
                        i += 1
                    } else {
                        merged.append(sorted[j].id)
                        j += 1
                    }
                }
                ids = merged
            } else {
                ids += sorted.map(\.id)
            }
        }

        /// Takes those whose start time has come from among those waiting for theirs.
        mutating func takeDue(now: Date) -> [Int64] {
            let now = now.timeIntervalSinceReferenceDate
            guard let first = timed.first, first.at <= now else { return [] }
            let end = timed.partitioningIndex { $0.at > now }
            let due = timed[..<end].map(\.id)
            timed.removeFirst(end)
            return due
        }

        /// - Parameter startAfter: the transfer's start time, if it has one.
        mutating func remove(_ id: Int64, session: String, startAfter: Date?) {
            if let startAfter {
                let key = Timed(at: startAfter.timeIntervalSinceReferenceDate, id: id)
                let index = timed.partitioningIndex { !($0 < key) }
                if index < timed.count, timed[index] == key {
                    timed.remove(at: index)
                    return
                }
            }
            guard let index = ids.firstIndex(of: id) else { return }
            ids.remove(at: index)
            count(session, -1)
        }

        /// Takes out those just started (each with its session), in one pass.
        mutating func remove(started: [(id: Int64, session: String)]) {
            guard !started.isEmpty else { return }
            let gone = Set(started.map(\.id))
            ids.removeAll { gone.contains($0) }
            for (_, session) in started { count(session, -1) }
        }

        private mutating func count(_ session: String, _ change: Int) {
            let n = perSession[session, default: 0] + change
            perSession[session] = n > 0 ? n : nil
        }
    }
}
