import FerryCore
import FerryKit
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// ``TransferJournal`` in PostgreSQL, which several daemons share (`FERRY_DATABASE_URL`).
///
/// Each method is one transaction. A change to a transfer reads its row `FOR UPDATE`, so two
/// members never interleave on one transfer. A transaction takes one advisory lock with its
/// first event, held to its commit: sequence numbers are then committed in order, and a reader
/// that has seen `seq` has seen every event before it, whichever member wrote it. Each commit
/// with events sends a NOTIFY; every member LISTENs and hands the new events, its own and the others', to its
/// ``onCommit(_:)`` handlers in `seq` order.
package final class PostgresJournal: TransferJournal {
    package static let channel = "ferry_events"

    let client: PostgresClient
    let logger: Logger
    private let running: Task<Void, Never>
    let handlers = Mutex<[@Sendable (TransferEvent) -> Void]>([])
    let listener = Mutex<Task<Void, Never>?>(nil)
    /// The last `seq` handed to the handlers.
    let delivered = Mutex<Int64>(0)
    /// The leases this journal's member holds or held, by transfer: every write to one of these
    /// transfers carries its fence, so once another member has claimed it, this member's writes
    /// are refused. A lost lease stays until released (its worker has let go).
    let held = Mutex<[Int64: Lease]>([:])

    /// Connects to `url` (`postgres://user:password@host:port/database`) and brings its schema
    /// up to date, waiting up to `patience` for the server (one that is starting, say).
    package static func connect(
        to url: String, patience: Duration = .seconds(30), logger: Logger = Logger(label: "ferry.journal")
    ) async throws -> PostgresJournal {
        // The pool's own log: its errors only (a server that is down is reported by the calls
        // that wait for it, not by each attempt to connect).
        var background = logger
        background.logLevel = .error
        let journal = PostgresJournal(client: PostgresClient(configuration: try configuration(url), backgroundLogger: background), logger: logger)
        // postgres-nio's pool tries to connect for ever: a server that never answers is said so.
        let waiting = Task {
            try await Task.sleep(for: .seconds(2))
            logger.warning("waiting for the database", metadata: ["database": "\(redacted(url))"])
        }
        defer { waiting.cancel() }
        do {
            try await attempt(limit: patience, stuck: patience) { _ in
                try await PostgresSchema.migrate(journal.client, logger: logger)
                // Handlers get the events journaled from now on.
                let last = try await journal.lastEventSeq()
                journal.delivered.withLock { $0 = last }
            }
        } catch is AttemptTimedOut {
            journal.close()
            throw FerryError(
                .daemonStartFailed,
                "Cannot reach the database at \(redacted(url)) within \(patience.components.seconds) s: is PostgreSQL running there, and does it accept this host (listen_addresses, pg_hba.conf)?"
            )
        } catch {
            journal.close()
            throw FerryError(.daemonStartFailed, "Cannot open the journal at \(redacted(url)): \(String(reflecting: error))")
        }
        return journal
    }

    private init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
        running = Task { await client.run() }
    }

    /// Stops the connections (and the LISTEN).
    package func close() {
        listener.withLock { $0?.cancel() }
        running.cancel()
    }

    deinit { close() }

    /// The client configuration of a `postgres://` URL.
    static func configuration(_ text: String) throws -> PostgresClient.Configuration {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? ""), let host = url.host, !host.isEmpty else {
            throw FerryError.invalidRequest("A database URL is postgres://user[:password]@host[:port]/database; got '\(redacted(text))'.")
        }
        let database = String(url.path.drop { $0 == "/" })
        var configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: url.user ?? "postgres", password: url.password,
            database: database.isEmpty ? nil : database, tls: .disable
        )
        configuration.options.maximumConnections = 16
        return configuration
    }

    /// The URL without its password, for messages.
    package static func redacted(_ text: String) -> String {
        guard var url = URLComponents(string: text), url.password != nil else { return text }
        url.password = "***"
        return url.string ?? "postgres://…"
    }

    // MARK: Transfers

    /// In batches: one lookup of the URLs already asked for per session, then rows and their
    /// `created` events many to a statement (10,000 URLs queued one statement each took longer
    /// than a client waits).
    package func createTransfers(_ drafts: [TransferRecord], reuseExisting: Bool) async throws -> [(record: TransferRecord, event: TransferEvent?)] {
        try await write { connection in
            var results = [(record: TransferRecord, event: TransferEvent?)?](repeating: nil, count: drafts.count)
            var fresh: [Int] = []
            // The same URL twice in one batch: the second is the first's (by index).
            var duplicates: [(index: Int, of: Int)] = []
            if reuseExisting {
                var existing: [String: [String: TransferRecord]] = [:]
                for (session, urls) in Dictionary(grouping: drafts, by: \.session).mapValues({ Set($0.map(\.url)) }) {
                    existing[session] = try await self.reusable(session: session, urls: Array(urls), connection)
                }
                var first: [String: [String: Int]] = [:]
                for (index, draft) in drafts.enumerated() {
                    if let record = existing[draft.session]?[draft.url] {
                        results[index] = (record, nil)
                    } else if let earlier = first[draft.session]?[draft.url] {
                        duplicates.append((index, earlier))
                    } else {
                        first[draft.session, default: [:]][draft.url] = index
                        fresh.append(index)
                    }
                }
            } else {
                fresh = Array(drafts.indices)
            }
            for start in stride(from: 0, to: fresh.count, by: Self.rowsPerInsert) {
                let batch = Array(fresh[start..<min(start + Self.rowsPerInsert, fresh.count)])
                var records = batch.map { drafts[$0] }
                for (record, id) in zip(records.indices, try await self.insertRows(records, connection)) { records[record].id = id }
                let events = try await self.insert(
                    records.map { TransferEvent(kind: .created, transferId: $0.transferId, session: $0.session, date: $0.createdAt) }, connection
                )
                for (offset, index) in batch.enumerated() { results[index] = (records[offset], events[offset]) }
            }
            for (index, earlier) in duplicates { results[index] = (results[earlier]!.record, nil) }
            return results.map { $0! }
        }
    }

    /// Rows inserted at once: PostgreSQL takes at most 65,535 parameters a statement.
    static let rowsPerInsert = 1000

    /// Inserts `records` in one statement. - Returns: their ids, in order (a sequence gives them
    /// in the order the rows go in).
    private func insertRows(_ records: [TransferRecord], _ connection: PostgresConnection) async throws -> [Int64] {
        let columns = TransferRecord.postgresColumns.count
        var binds = PostgresBindings(capacity: records.count * columns)
        var rows: [String] = []
        for (n, record) in records.enumerated() {
            record.appendPostgresBindings(to: &binds)
            rows.append("(" + (1...columns).map { "$\(n * columns + $0)" }.joined(separator: ", ") + ")")
        }
        let sql = "INSERT INTO transfer (\(TransferRecord.postgresColumns.joined(separator: ", "))) VALUES " + rows.joined(separator: ", ") + " RETURNING id"
        var ids: [Int64] = []
        for try await id in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).decode(Int64.self) { ids.append(id) }
        return ids.sorted()
    }

    /// The session's newest transfer of each of `urls` that counts as already asked for.
    private func reusable(session: String, urls: [String], _ connection: PostgresConnection) async throws -> [String: TransferRecord] {
        var binds = PostgresBindings()
        binds.append(session)
        binds.append(urls)
        binds.append(TransferJournalKeys.reusableStates.map(\.rawValue))
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: TransferRecord.postgresSelect + #" WHERE "session" = $1 AND url = ANY($2) AND NOT hidden AND state = ANY($3) ORDER BY id"#,
                binds: binds
            ),
            logger: logger
        )
        var found: [String: TransferRecord] = [:]
        for try await row in rows {
            let record = try TransferRecord(postgres: row)
            found[record.url] = record  // The newest last.
        }
        return found
    }

    package func transfer(id: Int64) async throws -> TransferRecord? {
        try await read { connection in try await self.record(id, connection, lock: false) }
    }

    package func listTransfers(session: String?, states: Set<TransferState>?, limit: Int?, after: Int64?, newestFirst: Bool) async throws -> [TransferRecord] {
        var conditions = ["NOT hidden"]
        var binds = PostgresBindings()
        if let session {
            binds.append(session)
            conditions.append(#""session" = $\#(binds.count)"#)
        }
        if let states {
            binds.append(states.map(\.rawValue).sorted())
            conditions.append("state = ANY($\(binds.count))")
        }
        if let after {
            binds.append(after)
            conditions.append("id \(newestFirst ? "<" : ">") $\(binds.count)")
        }
        var sql = TransferRecord.postgresSelect + " WHERE " + conditions.joined(separator: " AND ") + " ORDER BY id" + (newestFirst ? " DESC" : "")
        if let limit { sql += " LIMIT \(max(0, limit))" }
        return try await records(PostgresQuery(unsafeSQL: sql, binds: binds))
    }

    package func counts() async throws -> [TransferState: Int] {
        try await read { connection in
            var counts: [TransferState: Int] = [:]
            let rows = try await connection.query("SELECT state, COUNT(*) FROM transfer WHERE NOT hidden GROUP BY state", logger: self.logger)
            for try await (state, count) in rows.decode((String, Int64).self) {
                if let state = TransferState(rawValue: state) { counts[state] = Int(count) }
            }
            return counts
        }
    }

    /// A transfer this member holds is written under its lease (refused once another member has
    /// taken it); any other is a command from here (pause, resume, cancel): when it changes the
    /// transfer's state, the member that held it loses its lease, and stops.
    package func update<Result: Sendable>(
        id: Int64, _ body: @escaping @Sendable (inout TransferRecord) throws -> (Result, TransferEvent?)
    ) async throws -> (record: TransferRecord, result: Result, event: TransferEvent?) {
        try await update(id: id, fence: held.withLock { $0[id]?.fence }, body)
    }

    /// ``update(id:_:)``; with a `fence`, refused (`lease_lost`) unless the transfer's is still it.
    func update<Result: Sendable>(
        id: Int64, fence: Int64?, _ body: @escaping @Sendable (inout TransferRecord) throws -> (Result, TransferEvent?)
    ) async throws -> (record: TransferRecord, result: Result, event: TransferEvent?) {
        let written = try await write { connection in
            guard var (record, current) = try await self.lockedRecord(id, connection) else { throw FerryError.notFound(transfer: id) }
            if let fence {
                guard current == fence else {
                    throw FerryError(.leaseLost, "Transfer \(id) was taken by another member (fence \(current), this member held \(fence)): its write is refused.")
                }
            }
            let before = record
            let (result, draft) = try body(&record)
            if record != before {
                record.updatedAt = Date()
                var binds = record.postgresBindings
                binds.append(id)
                try await connection.query(PostgresQuery(unsafeSQL: TransferRecord.postgresUpdate, binds: binds), logger: self.logger)
            }
            if fence == nil, record.state != before.state, before.member != nil {
                try await connection.query(
                    #"UPDATE transfer SET "owner" = NULL, "leaseExpires" = NULL, fence = fence + 1 WHERE id = \#(id)"#, logger: self.logger
                )
                record.member = nil
            } else if fence != nil, !TransferJournalKeys.claimedStates.contains(record.state) {
                // Its holder is done with it (paused, failed, finished): given back in the same
                // transaction, not one more.
                try await connection.query(#"UPDATE transfer SET "owner" = NULL, "leaseExpires" = NULL WHERE id = \#(id)"#, logger: self.logger)
                record.member = nil
            }
            let event = try await draft.asyncMap { try await self.insert($0, connection) }
            return (record, result, event)
        }
        if fence != nil, !TransferJournalKeys.claimedStates.contains(written.0.state) {
            held.withLock { held in if held[id]?.fence == fence { held[id] = nil } }
        }
        return written
    }


    package func removeFinished(session: String?) async throws -> [Int64] {
        try await write { connection in
            var binds = PostgresBindings()
            binds.append([TransferState.completed.rawValue, TransferState.cancelled.rawValue])
            var sql = #"SELECT id, "session" FROM transfer WHERE state = ANY($1) AND NOT hidden"#
            if let session {
                binds.append(session)
                sql += #" AND "session" = $2"#
            }
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql + " ORDER BY id FOR UPDATE", binds: binds), logger: self.logger)
            var removed: [(Int64, String)] = []
            for try await row in rows.decode((Int64, String).self) { removed.append(row) }
            // Their earlier events go: the `removed` event written after tells every session.
            let ids = removed.map(\.0)
            try await connection.query(#"DELETE FROM event WHERE "transferId" = ANY(\#(ids))"#, logger: self.logger)
            for (id, session) in removed {
                try await connection.query("DELETE FROM transfer WHERE id = \(id)", logger: self.logger)
                _ = try await self.insert(TransferEvent(kind: .removed, transferId: id, session: session), connection)
            }
            return removed.map(\.0)
        }
    }

    package func removeHistory(before: Date, keepingNewest: Int, batch: Int) async throws -> [TransferRecord] {
        try await write { connection in
            let finished = "state IN ('completed', 'cancelled') AND NOT hidden"
            var newestGone: Int64 = 0
            for try await id in try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT id FROM transfer WHERE \(finished) ORDER BY id DESC LIMIT 1 OFFSET \(keepingNewest)"), logger: self.logger
            ).decode(Int64.self) { newestGone = id }
            var binds = PostgresBindings()
            binds.append(newestGone)
            binds.append(before)
            let rows = try await connection.query(
                PostgresQuery(
                    unsafeSQL: TransferRecord.postgresSelect + #" WHERE \#(finished) AND (id <= $1 OR "updatedAt" < $2) ORDER BY id LIMIT \#(batch) FOR UPDATE"#,
                    binds: binds
                ),
                logger: self.logger
            )
            var records: [TransferRecord] = []
            for try await row in rows { records.append(try TransferRecord(postgres: row)) }
            guard !records.isEmpty else { return [] }
            let ids = records.map(\.transferId)
            try await connection.query(#"DELETE FROM event WHERE "transferId" = ANY(\#(ids))"#, logger: self.logger)
            try await connection.query("DELETE FROM transfer WHERE id = ANY(\(ids))", logger: self.logger)
            _ = try await self.insert(records.map { TransferEvent(kind: .removed, transferId: $0.transferId, session: $0.session) }, connection)
            return records
        }
    }

    package func removeTransfer(id: Int64) async throws -> TransferEvent {
        try await write { connection in
            guard let record = try await self.record(id, connection, lock: true) else { throw FerryError.notFound(transfer: id) }
            try await connection.query(#"DELETE FROM event WHERE "transferId" = \#(id)"#, logger: self.logger)
            try await connection.query("DELETE FROM transfer WHERE id = \(id)", logger: self.logger)
            return try await self.insert(TransferEvent(kind: .removed, transferId: id, session: record.session), connection)
        }
    }

    // MARK: Plumbing

    static let encoder = FerryJSON.encoder()
    static let decoder = FerryJSON.decoder()

    /// A transaction (its events, if any, take the events lock and notify as they are inserted).
    /// - Parameter stuck: how long an attempt may take in all (``transactionLimit`` unless a
    ///   caller knows a shorter one is useless: a renewal slower than a lease).
    func write<Result: Sendable>(
        function: String = #function, stuck: Duration = transactionLimit, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await retrying(function, stuck: stuck) { connected in try await self.transaction(connected, body) }
    }

    /// A read on one connection, waiting out a lost server as ``retrying(_:)`` does.
    func read<Result: Sendable>(function: String = #function, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await retrying(function) { connected in
            try await self.client.withConnection { connection in
                connected()
                return try await body(connection)
            }
        }
    }

    /// How long a member waits for a lost server (a restart, a failover) before an operation fails.
    static let patience: Duration = .seconds(60)

    /// How long one attempt may wait for a connection, and how long it may take in all, before
    /// it is given up and made again. After a server restart, postgres-nio (1.33.2) was seen
    /// to leave a few calls waiting for ever on connections it had handed out, while the server
    /// had nothing open for them (tests/lab/test_cluster.py, PostgreSQL restarted under three
    /// members; `pg_stat_activity` all idle). The longest call Ferry makes (10,000 transfers
    /// queued at once) takes about 3 s.
    static let attemptLimit: Duration = .seconds(15)
    static let transactionLimit: Duration = .seconds(30)

    /// `body`, again while the server cannot be reached (every half second, for ``patience``):
    /// a member waits for PostgreSQL and carries on. A transaction cut off this way was rolled
    /// back by the server; only one whose COMMIT was sent as the connection died could run
    /// twice. An attempt that has no connection after ``attemptLimit`` (`body` says when it has
    /// one: `connected`), or has not finished after ``transactionLimit``, is cancelled and counts
    /// as a lost connection.
    func retrying<Result: Sendable>(
        _ function: String = #function, stuck: Duration = transactionLimit, _ body: @escaping @Sendable (_ connected: @escaping @Sendable () -> Void) async throws -> Result
    ) async throws -> Result {
        let deadline = ContinuousClock.now + Self.patience
        while true {
            do {
                return try await Self.attempt(limit: min(Self.attemptLimit, stuck), stuck: stuck, body)
            } catch where Self.isConnectionLoss(error) && ContinuousClock.now < deadline && !Task.isCancelled {
                logger.warning("journal unreachable; trying again", metadata: ["call": "\(function)", "error": "\(String(reflecting: error))"])
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// An attempt that took longer than ``attemptLimit``.
    struct AttemptTimedOut: Error {}

    /// `body` on a task of its own, abandoned (cancelled, its result dropped) if it has not
    /// said it is `connected` after `limit`, or has not finished after `stuck`.
    static func attempt<Result: Sendable>(
        limit: Duration, stuck: Duration = transactionLimit, _ body: @escaping @Sendable (_ connected: @escaping @Sendable () -> Void) async throws -> Result
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
            let outcome = FirstOutcome(continuation)
            let work = Task {
                do { outcome.settle(.success(try await body { outcome.connected() })) } catch { outcome.settle(.failure(error)) }
            }
            Task {
                try? await Task.sleep(for: limit)
                if !outcome.isConnected, outcome.settle(.failure(AttemptTimedOut())) { work.cancel() }
                try? await Task.sleep(for: stuck - limit)
                if outcome.settle(.failure(AttemptTimedOut())) { work.cancel() }
            }
        }
    }

    /// Resumes a continuation with the first result it is given.
    private final class FirstOutcome<Value: Sendable>: Sendable {
        private let continuation: Mutex<CheckedContinuation<Value, any Error>?>
        private let connection = Mutex(false)

        /// The attempt has its connection: it is not abandoned any more.
        func connected() { connection.withLock { $0 = true } }
        var isConnected: Bool { connection.withLock { $0 } }

        init(_ continuation: CheckedContinuation<Value, any Error>) { self.continuation = Mutex(continuation) }

        /// - Returns: whether this was the first.
        @discardableResult
        func settle(_ result: Swift.Result<Value, any Error>) -> Bool {
            guard let continuation = continuation.withLock({ $0.take() }) else { return false }
            continuation.resume(with: result)
            return true
        }
    }

    /// The server went away or is not accepting connections yet (SQLSTATE classes 08 and 57).
    static func isConnectionLoss(_ error: any Error) -> Bool {
        if error is AttemptTimedOut { return true }
        if let transaction = error as? PostgresTransactionError {
            return [transaction.beginError, transaction.closureError, transaction.commitError].contains { $0.map(isConnectionLoss) ?? false }
        }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .uncleanShutdown: return true
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || state.hasPrefix("57")
        default: return false
        }
    }

    private func transaction<Result: Sendable>(
        _ connected: @escaping @Sendable () -> Void, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        do {
            return try await client.withConnection { connection in
                connected()
                return try await connection.withTransaction(logger: self.logger) { connection in try await body(connection) }
            }
        } catch let error as PostgresTransactionError {
            // What the body refused with (rolled back), as the SQLite journal throws it.
            if let refused = error.closureError, !Self.isConnectionLoss(refused) { throw refused }
            throw error
        }
    }

    /// The transfer's row, locked for this transaction, with its fence.
    private func lockedRecord(_ id: Int64, _ connection: PostgresConnection) async throws -> (TransferRecord, Int64)? {
        var binds = PostgresBindings()
        binds.append(id)
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: TransferRecord.postgresSelectWithFence + " WHERE id = $1 FOR UPDATE", binds: binds), logger: logger
        )
        for try await row in rows { return (try TransferRecord(postgres: row), try TransferRecord.fence(of: row)) }
        return nil
    }

    private func record(_ id: Int64, _ connection: PostgresConnection, lock: Bool) async throws -> TransferRecord? {
        var binds = PostgresBindings()
        binds.append(id)
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: TransferRecord.postgresSelect + " WHERE id = $1" + (lock ? " FOR UPDATE" : ""), binds: binds), logger: logger
        )
        for try await row in rows { return try TransferRecord(postgres: row) }
        return nil
    }

    private func records(_ query: PostgresQuery) async throws -> [TransferRecord] {
        try await read { connection in
            var records: [TransferRecord] = []
            for try await row in try await connection.query(query, logger: self.logger) { records.append(try TransferRecord(postgres: row)) }
            return records
        }
    }

    func one<Value: PostgresDecodable>(_: Value.Type, _ query: PostgresQuery, _ connection: PostgresConnection) async throws -> Value {
        for try await value in try await connection.query(query, logger: logger).decode(Value.self) { return value }
        throw FerryError(.internalError, "The journal returned no row for: \(query.sql.prefix(80))")
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
