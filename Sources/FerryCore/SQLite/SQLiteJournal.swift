#if canImport(Glibc)
import Glibc
#endif
import FerryModel
import Foundation
import GRDB
import Synchronization

/// The crash-safe record of every transfer and every event, in SQLite (WAL).
///
/// All writes are single transactions, so the journal is consistent whatever moment the process
/// dies at. ``TransferJournal`` is what it shares with the PostgreSQL journal; the boot id is the
/// embedded daemon's. Other modules keep their tables in the same file (``SQLiteTables``): they
/// register their migrations, and say which finished transfers their rows still name.
package struct SQLiteJournal: TransferJournal {
    package let writer: any DatabaseWriter
    let committed = CommittedEvents()
    let writes = TransferWrites()
    /// The other modules' tables in this journal.
    let tables: [SQLiteTables]
    /// What dates a changed row (`updatedAt`) and the events the journal writes itself (a
    /// change's, `removed`), which retention ages: the engine's ``TransferEngine/Configuration/now``
    /// in the daemon, the real time elsewhere.
    let now: @Sendable () -> Date

    /// Opens (creating if needed) the journal file and brings its schema up to date: the
    /// transfer engine's tables and `tables`, which must be the same at every opening of a file
    /// (a module left out would not get its migrations). `now` stamps rows (tests move it ahead).
    package static func open(at url: URL, tables: [SQLiteTables] = [], now: @escaping @Sendable () -> Date = { Date() }) throws -> SQLiteJournal {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // WAL with NORMAL sync survives any process crash; on power loss the newest
            // transactions may be lost, which the resume protocol tolerates (durable byte counts
            // only go backwards, and recovery repairs an interrupted move into the library).
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // The WAL file is cut back to this after each checkpoint, not left at its largest.
            try db.execute(sql: "PRAGMA journal_size_limit = \(Self.walSizeLimit)")
        }
        // It holds accounts and feeds' credentials: made 0600 here (SQLite would make it 0644, and
        // its WAL and shared-memory files take the journal's mode).
        let fd = Glibc.open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 { Glibc.close(fd) }
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        try Self.useIncrementalVacuum(pool)
        return try SQLiteJournal(pool, tables: tables, now: now)
    }

    static let walSizeLimit = 64 << 20

    /// Pages freed by pruning go back to the file system (``compact()``) only in incremental
    /// auto-vacuum mode: a journal is converted once, by a VACUUM (instant for a new one; an
    /// old one needs its size again, free, for a moment).
    static func useIncrementalVacuum(_ pool: DatabasePool) throws {
        try pool.writeWithoutTransaction { db in
            guard try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != 2 else { return }
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            // The mode is written by a VACUUM once the file exists (WAL mode made it already).
            try db.execute(sql: "VACUUM")
        }
    }

    /// Calls `handler` with every event journaled from now on, once its transaction commits.
    /// Calls come from the journal's writer, one at a time, in commit order, which is `seq`
    /// order; a handler must return quickly.
    package func onCommit(_ handler: @escaping @Sendable (TransferEvent) -> Void) {
        committed.add(handler)
    }

    /// A journal in memory, for tests.
    package static func inMemory(tables: [SQLiteTables] = []) throws -> SQLiteJournal {
        try SQLiteJournal(DatabaseQueue(), tables: tables)
    }

    init(_ writer: any DatabaseWriter, tables: [SQLiteTables], now: @escaping @Sendable () -> Date = { Date() }) throws {
        self.writer = writer
        self.tables = tables
        self.now = now
        try SQLiteTables.migrator([.transfers] + tables).migrate(writer)
        writer.add(transactionObserver: writes, extent: .databaseLifetime)
    }
}

/// How many transactions have written transfers or events (``SQLiteJournal/mark()``), counted
/// when each commits: a list read before a commit was read at the count before it, so it is
/// never given again once the count has moved on.
final class TransferWrites: TransactionObserver, Sendable {
    private let committed = Atomic<Int64>(0)
    /// This transaction wrote one (writes are serialized: one transaction at a time).
    private let wrote = Atomic<Bool>(false)

    var count: Int64 { committed.load(ordering: .acquiring) }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        ["transfer", "event"].contains(eventKind.tableName)
    }

    func databaseDidChange(with event: DatabaseEvent) {
        wrote.store(true, ordering: .relaxed)
        // One change is enough to know: the rest of a 10,000-row transaction is not reported.
        stopObservingDatabaseChangesUntilNextTransaction()
    }

    func databaseDidCommit(_ db: Database) {
        if wrote.exchange(false, ordering: .relaxed) { committed.add(1, ordering: .releasing) }
    }

    func databaseDidRollback(_ db: Database) {
        wrote.store(false, ordering: .relaxed)
    }
}

/// The handlers of ``SQLiteJournal/onCommit(_:)``. Events are handed over from the writer's queue
/// after each commit rather than by whoever wrote them once their write returned: two workers'
/// events could overtake each other that way, and an event stream, which skips sequence numbers
/// it has passed, then lost the earlier one.
///
/// The events of one transaction wait together, behind one commit observer: GRDB asks every
/// observer about every statement, so one observer per event made a transaction of 10,000
/// new transfers quadratic (most of the time of queueing them).
final class CommittedEvents: Sendable {
    private let handlers = Mutex<[@Sendable (TransferEvent) -> Void]>([])
    /// Events of the transaction in progress (writes are serialized: there is one at a time).
    private let pending = Mutex<[TransferEvent]>([])

    func add(_ handler: @escaping @Sendable (TransferEvent) -> Void) {
        handlers.withLock { $0.append(handler) }
    }

    /// Hands `event` to the handlers when the transaction of `db` commits.
    func send(_ event: TransferEvent, after db: Database) {
        let handlers = handlers.withLock { $0 }
        guard !handlers.isEmpty else { return }
        let first = pending.withLock { pending in
            pending.append(event)
            return pending.count == 1
        }
        guard first else { return }
        db.afterNextTransaction(
            onCommit: { [self] _ in
                let events = self.pending.withLock { pending in
                    defer { pending = [] }
                    return pending
                }
                for event in events {
                    for handler in handlers { handler(event) }
                }
            },
            onRollback: { [self] _ in self.pending.withLock { $0 = [] } }
        )
    }
}
