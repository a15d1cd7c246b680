import FerryModel
import Foundation

/// What the engine keeps of its transfers, their events and their sessions' settings: one
/// protocol, two journals. ``SQLiteJournal`` keeps it in a SQLite file (the embedded default, one
/// machine); `PostgresJournal` (FerryCluster) in PostgreSQL, which several daemons share.
///
/// Every method is one transaction. Events get a sequence number that only grows, across all
/// sessions, never reused after pruning; ``onCommit(_:)`` handlers see them in that order.
package protocol TransferJournal: Sendable {
    /// Journals new transfers with their `created` events in one transaction; with
    /// `reuseExisting`, a session's URL already queued, running, paused, waiting or completed
    /// gives that transfer back (and no event) instead.
    func createTransfers(_ drafts: [TransferRecord], reuseExisting: Bool) async throws -> [(record: TransferRecord, event: TransferEvent?)]

    func transfer(id: Int64) async throws -> TransferRecord?

    /// Transfers in creation order (`newestFirst`: the other way), of one session and some
    /// states if asked, past the id `after` in that order, at most `limit`. Hidden ones (a
    /// song's or an episode's, taken off the list) are left out. Callers use
    /// ``transfers(session:states:limit:after:newestFirst:)``, whose parameters have defaults.
    func listTransfers(session: String?, states: Set<TransferState>?, limit: Int?, after: Int64?, newestFirst: Bool) async throws -> [TransferRecord]

    /// How many transfers are in each state (hidden ones left out).
    func counts() async throws -> [TransferState: Int]

    /// Reads, changes and writes one transfer in a single transaction, with the event the
    /// change produced (if any). `body` may throw to refuse the change: nothing is written.
    func update<Result: Sendable>(
        id: Int64, _ body: @escaping @Sendable (inout TransferRecord) throws -> (Result, TransferEvent?)
    ) async throws -> (record: TransferRecord, result: Result, event: TransferEvent?)

    /// Forgets every completed and cancelled transfer (of `session`, else of all), with a
    /// `removed` event each. - Returns: their ids.
    func removeFinished(session: String?) async throws -> [Int64]

    /// Forgets the oldest finished transfers (completed, cancelled) beyond the newest
    /// `keepingNewest` or last changed before `before`, at most `batch` in one transaction, as
    /// ``removeFinished(session:)`` does. - Returns: their records as they were.
    func removeHistory(before: Date, keepingNewest: Int, batch: Int) async throws -> [TransferRecord]

    /// Forgets one transfer, with its `removed` event.
    func removeTransfer(id: Int64) async throws -> TransferEvent

    /// Journals an event on its own. - Returns: it, with its `seq`.
    func append(_ event: TransferEvent) async throws -> TransferEvent

    /// The session's events after `seq` (every session's when nil), oldest first.
    func events(session: String?, after seq: Int64, limit: Int) async throws -> [TransferEvent]

    /// The newest sequence number ever given (0 when none).
    func lastEventSeq() async throws -> Int64

    func acknowledgedSeq(session: String) async throws -> Int64

    /// The session has handled every event up to `seq`: they are pruned. Never goes backwards.
    func acknowledge(session: String, through seq: Int64) async throws

    /// The newest event sequence number retention deleted of `session` (of any session when
    /// nil); 0 when none. A stream starting before it missed events.
    func prunedSeq(session: String?) async throws -> Int64

    /// Deletes each session's events beyond what `retention` keeps (``EventRetention``),
    /// remembering where each session's stop (``prunedSeq(session:)``).
    /// - Returns: how many went.
    @discardableResult
    func pruneEvents(_ retention: EventRetention, now: Date) async throws -> Int

    /// Keeps the store small and its statistics current after pruning (SQLite: incremental
    /// vacuum, `PRAGMA optimize`, a WAL checkpoint; PostgreSQL: `ANALYZE`, its autovacuum does
    /// the rest).
    func compact() async throws

    /// Ends a session for good: its events, its acknowledgement and its options go; its
    /// transfers stay. - Returns: how many events went.
    @discardableResult
    func forgetSession(_ session: String) async throws -> Int

    /// A session's options (empty when never set); ``TransferJournalKeys/daemonOptions`` names
    /// the daemon's.
    func sessionOptions(_ session: String) async throws -> TransferOptions

    /// Changes a session's options in one transaction. - Returns: the new ones.
    @discardableResult
    func updateSessionOptions(_ session: String, _ change: @escaping @Sendable (TransferOptions) throws -> TransferOptions) async throws -> TransferOptions

    /// Every session (and the daemon) with options, by name.
    func allSessionOptions() async throws -> [String: TransferOptions]
    /// A session's cookie jar (empty when it has none).
    func cookies(session: String) async throws -> [Cookie]
    /// Changes a session's cookie jar in one transaction (the cookies a response set, an
    /// import, a clear); returns the new jar.
    @discardableResult
    func updateCookies(session: String, _ change: @escaping @Sendable ([Cookie]) throws -> [Cookie]) async throws -> [Cookie]

    /// The credential store: every host's login, by host.
    func storedCredentials() async throws -> [StoredCredential]

    /// Keeps `credential` for its host, replacing the one it had.
    func saveCredential(_ credential: StoredCredential) async throws

    /// Forgets the login for `host` (as stored: `host` or `host:port`). - Returns: whether there was one.
    @discardableResult
    func removeCredential(host: String) async throws -> Bool

    /// Calls `handler` with every event journaled from now on, once committed, in `seq` order,
    /// one at a time; it must return quickly.
    func onCommit(_ handler: @escaping @Sendable (TransferEvent) -> Void)

    /// Where the journal stands: a count of the transactions that wrote transfers or events
    /// (with an event or without: a new priority has none). Equal marks: every transfer and the
    /// newest event read as they did. Nil when the journal cannot say (a cluster's).
    func mark() async throws -> JournalMark?
}

package enum TransferJournalKeys {
    /// The name the daemon's options are kept under (never a session's: not a valid name).
    package static let daemonOptions = "*"
    /// States in which a transfer of the same URL counts as already asked for.
    package static let reusableStates: [TransferState] = [.queued, .running, .paused, .waiting, .completed]
    /// In a cluster: states in which a member keeps a transfer it claimed; in any other it gives
    /// the claim back.
    package static let claimedStates: Set<TransferState> = [.queued, .running, .waiting]
}

extension TransferJournal {
    package func createTransfer(_ new: TransferRecord, reuseExisting: Bool) async throws -> (record: TransferRecord, event: TransferEvent?) {
        try await createTransfers([new], reuseExisting: reuseExisting)[0]
    }

    package func transfers(
        session: String? = nil, states: Set<TransferState>? = nil, limit: Int? = nil, after: Int64? = nil, newestFirst: Bool = false
    ) async throws -> [TransferRecord] {
        try await listTransfers(session: session, states: states, limit: limit, after: after, newestFirst: newestFirst)
    }

    /// ``update(id:_:)`` for changes that return nothing but an event.
    @discardableResult
    package func update(
        id: Int64, _ body: @escaping @Sendable (inout TransferRecord) throws -> TransferEvent?
    ) async throws -> (record: TransferRecord, event: TransferEvent?) {
        let (record, _, event) = try await update(id: id) { (record: inout TransferRecord) -> (Bool, TransferEvent?) in
            (true, try body(&record))
        }
        return (record, event)
    }

    package func events(session: String?, after seq: Int64) async throws -> [TransferEvent] {
        try await events(session: session, after: seq, limit: 1000)
    }

    /// The daemon-wide options (bandwidth for all transfers together, concurrency).
    package func daemonOptions() async throws -> TransferOptions {
        try await sessionOptions(TransferJournalKeys.daemonOptions)
    }

    @discardableResult
    package func updateDaemonOptions(_ change: @escaping @Sendable (TransferOptions) throws -> TransferOptions) async throws -> TransferOptions {
        try await updateSessionOptions(TransferJournalKeys.daemonOptions, change)
    }
}

/// ``TransferJournal/mark()``: what a list read at this mark may be given again for.
package struct JournalMark: Hashable, Sendable {
    package var writes: Int64

    package init(writes: Int64) {
        self.writes = writes
    }
}
