extension TransferControl {
    /// Queued transfers in queue order (higher priority first, then rank: its id unless it was
    /// moved, so a transfer keeps its place), with how many each session has: scheduling stops
    /// walking the queue once no session with queued transfers may start one, so half a million
    /// in a session a schedule holds are not walked at every input.
    struct Queue: Sendable {
        private(set) var ids: [Int64] = []
        private(set) var perSession: [String: Int] = [:]

        /// Puts `id` at its place, unless it is there already.
        /// - Parameter precedes: whether a queued transfer goes before this one.
        mutating func insert(_ id: Int64, session: String, precedes: (Int64) -> Bool) {
            // Most come last (the same priority, a newer id): no search.
            let goesLast = ids.last.map(precedes) ?? true
            let index = goesLast ? ids.count : ids.partitioningIndex { !precedes($0) }
            guard index == ids.count || ids[index] != id else { return }
            ids.insert(id, at: index)
            perSession[session, default: 0] += 1
        }

        mutating func remove(_ id: Int64, session: String) {
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
