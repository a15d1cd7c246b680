import FerryCore
import GRDB

/// ``ListeningStore`` in the daemon's SQLite journal, in tables of its own
/// (``FerryCore/SQLiteTables/listening``): a journal opened without them has no listening store.
package struct SQLiteListeningStore: Sendable {
    let writer: any DatabaseWriter

    package init(_ journal: SQLiteJournal) {
        writer = journal.writer
    }
}
