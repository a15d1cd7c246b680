import FerryKit
import FerryListening
import FerryTestSupport
import Foundation
import PostgresNIO
import Synchronization
import Testing

@testable import FerryCluster

/// Podcast refreshes in a cluster run on one member at a time: two members' stores on one real
/// PostgreSQL, each with its own connections, as two daemons have.
@Suite(.enabled(if: PostgresServer.isAvailable, "\(PostgresServer.unavailableReason ?? "")"))
struct RefreshTurnTests {
    static func withMembers(_ body: (PostgresListeningStore, PostgresListeningStore) async throws -> Void) async throws {
        let url = try await MigratedDatabase.make()
        let first = try await PostgresJournal.connect(to: url)
        defer { first.close() }
        let second = try await PostgresJournal.connect(to: url)
        defer { second.close() }
        try await body(PostgresListeningStore(journal: first), PostgresListeningStore(journal: second))
    }

    /// A body that holds its turn until ``release()``.
    final class Hold: Sendable {
        private let entered = Atomic<Bool>(false)
        private let released = Atomic<Bool>(false)
        var hasEntered: Bool { entered.load(ordering: .sequentiallyConsistent) }
        func release() { released.store(true, ordering: .sequentiallyConsistent) }

        func run() async throws -> String {
            entered.store(true, ordering: .sequentiallyConsistent)
            while !released.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(5)) }
            return "done"
        }
    }

    /// Advisory locks in the test's own database (the server is every test's).
    static let ours = "locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"

    /// Advisory locks that sessions wait for (PostgreSQL's view).
    static func waitingLocks(_ store: PostgresListeningStore) async throws -> Int64 {
        try await store.journal.read { connection in
            try await store.journal.one(Int64.self, "SELECT COUNT(*) FROM pg_locks WHERE \(unescaped: ours) AND NOT granted", connection)
        }
    }

    @Test func anotherMemberSkipsTheRefreshTurnWhileOneHoldsIt() async throws {
        try await Self.withMembers { a, b in
            let hold = Hold()
            let holding = Task { try await a.duringRefreshTurn { try await hold.run() } }
            try await eventually("member a's turn") { hold.hasEntered }
            let skipped = try await b.duringRefreshTurn { "b refreshed" }
            #expect(skipped == nil)
            hold.release()
            #expect(try await holding.value == "done")
            // Given back: b's turn now.
            let turn = try await b.duringRefreshTurn { "b refreshed" }
            #expect(turn == "b refreshed")
        }
    }

    @Test func aMemberThatDiesGivesItsTurnUpWithItsConnection() async throws {
        try await Self.withMembers { a, b in
            let hold = Hold()
            let holding = Task { try await a.duringRefreshTurn { try await hold.run() } }
            try await eventually("member a's turn") { hold.hasEntered }
            // Member a's session ends as a killed daemon's does: the server drops it.
            let ended = try await b.journal.read { connection in
                try await b.journal.one(
                    Int64.self,
                    "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_locks WHERE \(unescaped: Self.ours) AND granted AND pid != pg_backend_pid()",
                    connection
                )
            }
            #expect(ended == 1)
            try await eventually("b's turn after a died") { try await b.duringRefreshTurn { true } == true }
            hold.release()
            // Member a's refresh still ends (postgres-nio left the unlock on the dropped connection
            // waiting for ever: it is given up, and the connection closed).
            let result = try await holding.value
            #expect(result == "done")
        }
    }

    @Test func aPodcastIsRefreshedByOneMemberAtATimeAndOthersWait() async throws {
        try await Self.withMembers { a, b in
            let hold = Hold()
            let holding = Task { try await a.refreshingPodcast(7) { try await hold.run() } }
            try await eventually("member a refreshing podcast 7") { hold.hasEntered }
            // Another podcast is not held up.
            let other = try await b.refreshingPodcast(8) { "8" }
            #expect(other == "8")
            let entered = Atomic<Bool>(false)
            let waiting = Task {
                try await b.refreshingPodcast(7) {
                    entered.store(true, ordering: .sequentiallyConsistent)
                    return "b refreshed 7"
                }
            }
            // b is waiting in PostgreSQL for a's lock, and has not started.
            try await eventually("b waiting for podcast 7") { try await Self.waitingLocks(a) == 1 }
            let enteredEarly = entered.load(ordering: .sequentiallyConsistent)
            #expect(!enteredEarly)
            hold.release()
            #expect(try await holding.value == "done")
            #expect(try await waiting.value == "b refreshed 7")
        }
    }

    @Test func aRefreshThatFailsGivesItsLockBack() async throws {
        try await Self.withMembers { a, b in
            await #expect(throws: FerryError.self) {
                try await a.refreshingPodcast(3) { () async throws -> Int in throw FerryError(.feedUnavailable, "gone") }
            }
            let refreshed = try await b.refreshingPodcast(3) { 3 }
            #expect(refreshed == 3)
            let waiting = try await Self.waitingLocks(a)
            #expect(waiting == 0)
        }
    }
}
