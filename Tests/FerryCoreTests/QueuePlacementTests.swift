import FerryCore
import FerryTestSupport
import Testing

/// An exact place in the queue: after the moves are written, the queue runs in the order asked
/// for, those behind the place keep their rank, and a transfer added later still goes last.
struct QueuePlacementTests {
    typealias Place = QueuePlacement.Place

    /// The order after writing `changes` over `order`.
    static func applied(_ changes: [Place], to order: [Place]) -> [Place] {
        var byId = Dictionary(uniqueKeysWithValues: order.map { ($0.id, $0) })
        for change in changes { byId[change.id] = change }
        return QueuePlacement.sorted(Array(byId.values))
    }

    static func expected(_ order: [Place], moving id: Int64, to index: Int) -> [Int64] {
        var ids = order.map(\.id).filter { $0 != id }
        ids.insert(id, at: min(max(0, index), ids.count))
        return ids
    }

    @Test func aTransferNeverMovedGoesBetweenTwoOthersOfItsPriority() {
        let order = (1...5).map { Place(id: $0, priority: 0, rank: nil) }
        let changes = QueuePlacement.moves(order, moving: 5, to: 1)
        #expect(Self.applied(changes, to: order).map(\.id) == [1, 5, 2, 3, 4])
        // Rank 1 puts it behind 1 (the lower id wins a tie): one write.
        #expect(changes == [Place(id: 5, priority: 0, rank: 1)])
        // No room between two moved before: the one ahead steps further ahead, written first.
        let crowded = [Place(id: 9, priority: 0, rank: 1), Place(id: 3, priority: 0, rank: 2), Place(id: 5, priority: 0, rank: 7)]
        let squeezed = QueuePlacement.moves(crowded, moving: 5, to: 1)
        #expect(Self.applied(squeezed, to: crowded).map(\.id) == [9, 5, 3])
        #expect(squeezed == [Place(id: 9, priority: 0, rank: 0), Place(id: 5, priority: 0, rank: 1)])
    }

    @Test func theHeadAndTheTail() {
        let order = (1...4).map { Place(id: $0, priority: 0, rank: nil) }
        #expect(Self.applied(QueuePlacement.moves(order, moving: 3, to: 0), to: order).map(\.id) == [3, 1, 2, 4])
        #expect(Self.applied(QueuePlacement.moves(order, moving: 2, to: 99), to: order).map(\.id) == [1, 3, 4, 2])
        #expect(Self.applied(QueuePlacement.moves(order, moving: 2, to: -7), to: order).map(\.id) == [2, 1, 3, 4])
        // Where it is already: nothing to write.
        #expect(QueuePlacement.moves(order, moving: 2, to: 1).isEmpty)
        #expect(QueuePlacement.moves([order[0]], moving: 1, to: 5).isEmpty)
        #expect(QueuePlacement.moves(order, moving: 42, to: 0).isEmpty)
    }

    @Test func aMoveAcrossPrioritiesTakesThePriorityOfItsPlace() {
        let order = QueuePlacement.sorted([
            Place(id: 1, priority: 10, rank: nil), Place(id: 2, priority: 10, rank: nil),
            Place(id: 3, priority: 0, rank: nil), Place(id: 4, priority: -10, rank: nil),
        ])
        let up = QueuePlacement.moves(order, moving: 4, to: 1)
        #expect(Self.applied(up, to: order).map(\.id) == [1, 4, 2, 3])
        #expect(up.last?.priority == 10)
        let down = QueuePlacement.moves(order, moving: 1, to: 3)
        #expect(Self.applied(down, to: order).map(\.id) == [2, 3, 4, 1])
        #expect(down.last?.priority == -10)
    }

    /// Random queues (priorities, ranks from earlier moves) and random moves, each checked
    /// against a list where the transfer is simply taken out and put back at the place.
    @Test func randomMovesGiveExactlyTheOrderAsked() {
        var generator = SplitMix64(seed: 2026)
        for _ in 0..<500 {
            let count = Int.random(in: 1...12, using: &generator)
            var order = QueuePlacement.sorted((1...Int64(count)).map { id in
                Place(id: id, priority: [0, 0, 0, 10, -10].randomElement(using: &generator)!, rank: Bool.random(using: &generator) ? nil : Int64.random(in: -5...15, using: &generator))
            })
            for _ in 0..<6 {
                let id = order.randomElement(using: &generator)!.id
                let index = Int.random(in: -2...(count + 2), using: &generator)
                let changes = QueuePlacement.moves(order, moving: id, to: index)
                let next = Self.applied(changes, to: order)
                #expect(next.map(\.id) == Self.expected(order, moving: id, to: index), "\(order) moving \(id) to \(index)")
                // Behind the place nothing changed but the moved one.
                let place = next.firstIndex { $0.id == id }!
                for behind in next[(place + 1)...] { #expect(order.contains(behind)) }
                // A transfer added now (a higher id, no rank, priority 0) that would have gone
                // behind every priority-0 one still does.
                let added = Place(id: Int64(count + 1), priority: 0, rank: nil)
                if QueuePlacement.sorted(order + [added]).last(where: { $0.priority == 0 }) == added {
                    #expect(QueuePlacement.sorted(next + [added]).last { $0.priority == 0 } == added)
                }
                order = next
            }
        }
    }
}
