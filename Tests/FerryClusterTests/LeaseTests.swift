import FerryCluster
import FerryKit
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryCore

/// The cluster's queue in a real PostgreSQL, with several members (each its own journal, its
/// own connections) claiming at once: every transfer taken by exactly one, in queue order;
/// an expired lease taken over with a higher fence, the old holder's writes refused.
@Suite(.enabled(if: PostgresServer.isAvailable, "\(PostgresServer.unavailableReason ?? "")"))
struct LeaseTests {
    static func withMembers(_ count: Int, _ body: ([PostgresJournal]) async throws -> Void) async throws {
        let url = try await MigratedDatabase.make()
        var members: [PostgresJournal] = []
        for _ in 0..<count { members.append(try await PostgresJournal.connect(to: url)) }
        defer { for member in members { member.close() } }
        try await body(members)
    }

    static func queue(_ journal: PostgresJournal, _ count: Int) async throws {
        let drafts = (0..<count).map { TransferRecord(session: "s", url: "http://127.0.0.1/\($0)", folder: "Downloads") }
        _ = try await journal.createTransfers(drafts, reuseExisting: false)
    }

    @Test func threeMembersClaimThreeHundredTransfersEachOnce() async throws {
        try await Self.withMembers(3) { members in
            try await Self.queue(members[0], 300)
            // One batch each to begin with, then all at once until the queue is empty.
            var firsts: [[Int64]] = []
            for (n, member) in members.enumerated() {
                firsts.append(try await member.claim(for: "m\(n)", limit: 7, lease: .seconds(30)).map(\.record.transferId))
            }
            #expect(firsts == [Array(1...7), Array(8...14), Array(15...21)])
            let claims = try await withThrowingTaskGroup(of: (String, [Int64]).self) { group in
                for (n, member) in members.enumerated() {
                    group.addTask { [firsts] in
                        var mine = firsts[n]
                        while true {
                            let batch = try await member.claim(for: "m\(n)", limit: 7, lease: .seconds(30))
                            if batch.isEmpty { break }
                            mine += batch.map(\.record.transferId)
                        }
                        return ("m\(n)", mine)
                    }
                }
                var all: [String: [Int64]] = [:]
                for try await (member, ids) in group { all[member] = ids }
                return all
            }
            let taken = claims.values.flatMap { $0 }
            #expect(taken.count == 300 && Set(taken) == Set(1...300))
            // Each member's claims came in queue order.
            #expect(claims.values.allSatisfy { $0 == $0.sorted() })
            // Nothing is left to claim while the leases hold.
            #expect(try await members[1].claim(for: "m1", limit: 10, lease: .seconds(30)).isEmpty)
        }
    }

    @Test func claimsFollowPriorityAndRank() async throws {
        try await Self.withMembers(1) { members in
            let journal = members[0]
            try await Self.queue(journal, 5)
            try await journal.update(id: 4) { record in
                record.priority = 10
                return nil
            }
            try await journal.update(id: 2) { record in
                record.queueRank = 99
                return nil
            }
            let order = try await journal.claim(for: "m", limit: 10, lease: .seconds(30)).map(\.record.transferId)
            #expect(order == [4, 1, 3, 5, 2])
        }
    }

    /// The lease's end is moved into the past in the database rather than waited for: the
    /// database's clock is the one leases follow, and a wait would race a loaded machine.
    @Test func anExpiredLeaseIsTakenOverAndTheOldHoldersWritesAreRefused() async throws {
        let url = try await MigratedDatabase.make()
        let (a, b) = (try await PostgresJournal.connect(to: url), try await PostgresJournal.connect(to: url))
        defer {
            a.close()
            b.close()
        }
        func expire(_ id: Int64) async throws {
            _ = try await PostgresServer.offPool {
                try PostgresServer.start().psql(url, #"UPDATE transfer SET "leaseExpires" = now() - interval '1 second' WHERE id = \#(id)"#)
            }
        }
        try await Self.queue(a, 1)
        let first = try #require(try await a.claim(for: "a", limit: 1, lease: .seconds(30)).first)
        try await a.update(id: 1, under: first.lease) { record in
            record.state = .running
            record.durableBytes = 100
            return ((), nil)
        }
        // While it holds, nobody else takes it; renewed, it holds longer.
        #expect(try await b.claim(for: "b", limit: 1, lease: .seconds(30)).isEmpty)
        let renewed = try await a.renew([first.lease], lease: .seconds(30))
        #expect(renewed.map(\.fence) == [first.lease.fence] && renewed[0].expires >= first.lease.expires)
        // a goes quiet past its lease: b takes the running transfer over, with a higher fence.
        try await expire(1)
        let taken = try #require(try await b.claim(for: "b", limit: 1, lease: .seconds(30)).first)
        #expect(taken.record.transferId == 1 && taken.record.durableBytes == 100)
        #expect(taken.lease.fence > first.lease.fence)
        // a comes back: its write is refused and nothing changes; its renewal finds nothing.
        let late = await #expect(throws: FerryError.self) {
            try await a.update(id: 1, under: first.lease) { record in
                record.durableBytes = 5
                return ((), nil)
            }
        }
        #expect(late?.code == .leaseLost)
        #expect(try await a.renew([first.lease], lease: .seconds(30)).isEmpty)
        #expect(try await b.transfer(id: 1)?.durableBytes == 100)
        try await b.update(id: 1, under: taken.lease) { record in
            record.durableBytes = 200
            return ((), nil)
        }
        #expect(try await a.transfer(id: 1)?.durableBytes == 200)
        // Released, it is queued work again for whoever claims next (a, with a new fence).
        try await b.release(taken.lease)
        try await b.update(id: 1) { record in
            record.state = .queued
            return nil
        }
        let again = try #require(try await a.claim(for: "a", limit: 1, lease: .seconds(30)).first)
        #expect(again.lease.fence > taken.lease.fence)
    }

    @Test func membersBeatAndAreListed() async throws {
        try await Self.withMembers(2) { members in
            try await members[0].heartbeat(.init(id: "alpha", address: "http://10.0.0.1:8757"))
            try await members[1].heartbeat(.init(id: "beta", address: nil))
            try await Task.sleep(for: .milliseconds(20))
            #expect(try await members[0].heartbeat(.init(id: "alpha", address: "http://10.0.0.1:8757"), aliveWithin: .seconds(30)) == 2)
            let listed = try await members[1].members(aliveWithin: .seconds(30)).map(\.member)
            #expect(listed.map(\.id) == ["alpha", "beta"])
            #expect(listed[0].address == "http://10.0.0.1:8757" && listed[1].address == nil)
            #expect(listed[0].heartbeatAt > listed[1].heartbeatAt)
        }
    }

    @Test func aCommandFromAnotherMemberTakesTheClaimAway() async throws {
        try await Self.withMembers(2) { members in
            let (a, b) = (PostgresLeases(journal: members[0], member: "a", address: nil), members[1])
            try await Self.queue(members[0], 1)
            #expect(try await a.claim(limit: 1, limits: [:], paused: [], excluding: []).map(\.transferId) == [1])
            try await members[0].update(id: 1) { record in
                record.state = .running
                return nil
            }
            // b pauses it: the pause is journaled, and a's claim is gone (its fence moved on).
            try await b.update(id: 1) { record in
                record.state = .paused
                return nil
            }
            #expect(try await b.transfer(id: 1)?.member == nil)
            let late = await #expect(throws: FerryError.self) {
                try await members[0].update(id: 1) { record in
                    record.durableBytes = 9
                    return nil
                }
            }
            #expect(late?.code == .leaseLost)
            #expect(try await a.renew() == [1])
            #expect(try await b.transfer(id: 1).map { ($0.state, $0.durableBytes) } ?? (.queued, -1) == (.paused, 0))
            // A change that is not a command (its state stays) leaves the holder's claim alone.
            try await b.update(id: 1) { record in
                record.state = .queued
                return nil
            }
            await a.release(1)
            #expect(try await a.claim(limit: 1, limits: [:], paused: [], excluding: []).map(\.transferId) == [1])
            try await b.update(id: 1) { record in
                record.priority = 5
                return nil
            }
            #expect(try await a.renew().isEmpty)
            #expect(try await b.transfer(id: 1)?.member == "a")
        }
    }

    @Test func claimsKeepEachSessionsLimitAcrossMembers() async throws {
        try await Self.withMembers(2) { members in
            let (a, b) = (PostgresLeases(journal: members[0], member: "a", address: nil), PostgresLeases(journal: members[1], member: "b", address: nil))
            let drafts = (0..<10).map { TransferRecord(session: "s", url: "http://127.0.0.1/s\($0)", folder: "Downloads") }
                + (0..<4).map { TransferRecord(session: "t", url: "http://127.0.0.1/t\($0)", folder: "Downloads") }
                + (0..<2).map { TransferRecord(session: "u", url: "http://127.0.0.1/u\($0)", folder: "Downloads") }
            _ = try await members[0].createTransfers(drafts, reuseExisting: false)
            // "s" runs at most 3 at once in the whole cluster, "u" is held by its schedule.
            let first = try await a.claim(limit: 5, limits: ["s": 3], paused: ["u"], excluding: [])
            #expect(first.map(\.transferId) == [1, 2, 3, 11, 12])
            let second = try await b.claim(limit: 10, limits: ["s": 3], paused: ["u"], excluding: [13])
            #expect(second.map(\.transferId) == [14])
            // One of "s" given back: one more of "s" may go.
            try await members[0].update(id: 2) { record in
                record.state = .completed
                return nil
            }
            await a.release(2)
            #expect(try await b.claim(limit: 10, limits: ["s": 3], paused: ["u"], excluding: []).map(\.transferId) == [4, 13])
            let listed = try await b.members()
            #expect(listed.isEmpty)  // Nobody has beaten yet.
            try await a.heartbeat()
            try await b.heartbeat()
            let holdings = Dictionary(uniqueKeysWithValues: try await b.members().map { ($0.id, ($0.alive, $0.transfers)) })
            #expect(holdings["a"]?.0 == true && holdings["a"]?.1 == [1, 3, 11, 12])
            #expect(holdings["b"]?.1 == [4, 13, 14])
        }
    }

    @Test func aMemberStartingAgainGivesBackWhatItsNameHeld() async throws {
        try await Self.withMembers(2) { members in
            let before = PostgresLeases(journal: members[0], member: "a", address: nil)
            try await Self.queue(members[0], 3)
            #expect(try await before.claim(limit: 3, limits: [:], paused: [], excluding: []).count == 3)
            // The same name in a new process (its own journal): what it held is queued work again
            // at once, and the old process's writes are refused.
            let after = PostgresLeases(journal: members[1], member: "a", address: nil)
            await after.releaseAll()
            let refused = await #expect(throws: FerryError.self) {
                try await members[0].update(id: 2) { record in
                    record.durableBytes = 1
                    return nil
                }
            }
            #expect(refused?.code == .leaseLost)
            #expect(try await after.claim(limit: 3, limits: [:], paused: [], excluding: []).map(\.transferId) == [1, 2, 3])
        }
    }
}
