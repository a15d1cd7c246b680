import FerryCore
import FerryKit
import Foundation
import GRDB

/// A journal that will not open, or fails SQLite's integrity check, judged before anything
/// migrates it; and its recovery: the file copied aside untouched, every row SQLite can still
/// read copied into a new journal, that put in place, and the user told how many rows each
/// table kept.
package enum JournalRecovery {
    /// What is wrong with the journal file, or nil when it opens and is intact (or is absent).
    package static func damage(at journal: URL) -> [String]? {
        guard FileManager.default.fileExists(atPath: journal.path) else { return nil }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: journal.path, configuration: configuration)
            let problems = try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check(20)").filter { $0 != "ok" } }
            try queue.close()
            return problems.isEmpty ? nil : problems
        } catch {
            return ["\(error)"]
        }
    }

    package struct Outcome: Sendable {
        /// The damaged journal, as it was.
        package var aside: URL
        /// Rows per table in the recovered journal.
        package var kept: [(table: String, rows: Int)]
    }

    /// Recovers the journal of a stopped daemon (the caller holds its lock).
    /// - Parameter tables: the modules' tables, to open the result as the daemon will.
    /// - Throws: `file_system` when nothing of the journal can be read; it is then as it was.
    /// - Parameter partFileIds: the transfers' ids the part files on disk name.
    package static func recover(_ journal: URL, tables: [SQLiteTables], partFileIds: [Int64] = [], now: Date = Date()) throws -> Outcome {
        let folder = journal.deletingLastPathComponent()
        let stamp = ISO8601DateFormatter.string(from: now, timeZone: .gmt, formatOptions: [.withYear, .withMonth, .withDay, .withTime])
        let aside = folder.appendingPathComponent("journal-damaged-\(stamp).sqlite")
        let recovered = folder.appendingPathComponent("journal-recovered.sqlite")
        // Read from a second copy: SQLite may write to a file it reads (its WAL checkpointed on
        // close), and the copy kept aside stays as the journal was.
        let scratch = folder.appendingPathComponent("journal-salvaging.sqlite")
        let manager = FileManager.default
        for copy in [aside, scratch] {
            for suffix in ["", "-wal", "-shm"] { try? manager.removeItem(atPath: copy.path + suffix) }
            for suffix in ["", "-wal"] where manager.fileExists(atPath: journal.path + suffix) {
                try manager.copyItem(atPath: journal.path + suffix, toPath: copy.path + suffix)
            }
        }
        defer { for suffix in ["", "-wal", "-shm"] { try? manager.removeItem(atPath: scratch.path + suffix) } }
        for suffix in ["", "-wal", "-shm"] { try? manager.removeItem(atPath: recovered.path + suffix) }
        let kept: [(table: String, rows: Int)]
        do {
            // A new journal, made as the daemon makes one, then every row the copy still gives.
            try SQLiteJournal.open(at: recovered, tables: tables).writer.close()
            kept = try salvage(from: scratch, into: recovered, partFileIds: partFileIds)
        } catch {
            for suffix in ["", "-wal", "-shm"] { try? manager.removeItem(atPath: recovered.path + suffix) }
            throw FerryError(.fileSystem, "Nothing could be read from the journal (\(error)); it is untouched, and a copy is at \(aside.path).")
        }
        for suffix in ["-wal", "-shm"] { try? manager.removeItem(atPath: journal.path + suffix) }
        guard rename(recovered.path, journal.path) == 0 else {
            throw FerryError(.fileSystem, "Could not put the recovered journal in place: \(String(cString: strerror(errno))); it is at \(recovered.path).")
        }
        for suffix in ["-wal", "-shm"] { try? manager.removeItem(atPath: recovered.path + suffix) }
        return Outcome(aside: aside, kept: kept)
    }

    /// Copies every row SQLite can still read from `damaged` into the new journal's tables, as
    /// the sqlite3 shell's `.dump` does with a damaged file: each table read forwards by rowid
    /// until a damaged page stops it, then backwards from its end, so only rows on damaged pages
    /// are lost. (SQLite's `.recover` needs the `sqlite_dbpage` table, which Debian's SQLite is
    /// built without.) Columns are matched by name, so an older journal's rows fit too; triggers
    /// wait until the rows are in, so a copied row is not taken for a new change. `ferry restore`
    /// reads a backup the same way.
    static func salvage(from damaged: URL, into fresh: URL, partFileIds: [Int64]) throws -> [(table: String, rows: Int)] {
        let queue = try DatabaseQueue(path: fresh.path)
        defer { try? queue.close() }
        return try queue.writeWithoutTransaction { db in
            // As `.dump` does: a schema entry whose pages are gone no longer stops the reading of the rest.
            try db.execute(sql: "PRAGMA writable_schema = ON")
            // Tables are copied one by one, in no order their references know of (an episode
            // before its podcast): the references are whole again once all are in.
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try db.execute(sql: "ATTACH DATABASE ? AS damaged", arguments: [damaged.path])
            let triggers = try String.fetchAll(db, sql: "SELECT sql FROM main.sqlite_master WHERE type = 'trigger'")
            for name in try String.fetchAll(db, sql: "SELECT name FROM main.sqlite_master WHERE type = 'trigger'") {
                try db.execute(sql: "DROP TRIGGER \"\(name)\"")
            }
            let names = try String.fetchAll(
                db, sql: "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'grdb_%' ORDER BY name"
            )
            var kept: [(table: String, rows: Int)] = []
            for table in names {
                let ours = Set(try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?, 'main')", arguments: [table]))
                guard let theirs = try? String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?, 'damaged')", arguments: [table]) else { continue }
                let columns = theirs.filter(ours.contains).map { "\"\($0)\"" }
                guard !columns.isEmpty else { continue }
                try db.execute(sql: "DELETE FROM main.\"\(table)\"")
                kept.append((table, try copyRows(db, table: table, columns: columns)))
            }
            try continueSequences(db, partFileIds: partFileIds)
            for sql in triggers { try db.execute(sql: sql) }
            try db.execute(sql: "DETACH DATABASE damaged")
            try db.execute(sql: "PRAGMA writable_schema = OFF")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            return kept
        }
    }

    /// Ids and sequence numbers are never given twice, even for rows the damage took: each
    /// numbering goes on after the highest the copy's counter, its rows, the rows naming them
    /// (episodes, songs, events, sessions' acknowledgements) or the part files on disk show.
    private static func continueSequences(_ db: Database, partFileIds: [Int64]) throws {
        func highest(_ sql: String) -> Int64 { ((try? Int64.fetchOne(db, sql: sql)) ?? nil) ?? 0 }
        let named: [String: [String]] = [
            "transfer": [
                "SELECT max(transferId) FROM main.event", "SELECT max(transferId) FROM main.episode", "SELECT max(transferId) FROM main.track",
            ],
            "event": ["SELECT max(acknowledgedSeq) FROM main.session", "SELECT max(prunedSeq) FROM main.session"],
        ]
        let tables = try String.fetchAll(db, sql: "SELECT name FROM main.sqlite_master WHERE type = 'table' AND sql LIKE '%AUTOINCREMENT%'")
        for table in tables {
            var next = highest("SELECT max(rowid) FROM main.\"\(table)\"")
            next = max(next, ((try? Int64.fetchOne(db, sql: "SELECT max(seq) FROM damaged.sqlite_sequence WHERE name = ?", arguments: [table])) ?? nil) ?? 0)
            for sql in named[table] ?? [] { next = max(next, highest(sql)) }
            if table == "transfer" { next = max(next, partFileIds.max() ?? 0) }
            try db.execute(sql: "DELETE FROM main.sqlite_sequence WHERE name = ?", arguments: [table])
            try db.execute(sql: "INSERT INTO main.sqlite_sequence (name, seq) VALUES (?, ?)", arguments: [table, next])
        }
    }

    /// Rows read in their own statement, written in a transaction of the new journal's alone (a
    /// transaction that read the damaged file could not commit).
    /// - Returns: how many were written: a row read from a damaged page that breaks the schema's
    ///   rules (a NULL where none may be) is left out, not the table.
    private static func write(_ rows: [Row], _ db: Database, _ insert: String) throws -> Int {
        var written = 0
        try db.inTransaction {
            for row in rows {
                do {
                    try db.execute(sql: insert, arguments: StatementArguments(row.databaseValues))
                    written += 1
                } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                    continue
                }
            }
            return .commit
        }
        return written
    }

    /// Forwards by rowid until an error, then backwards from the end down to where that stopped.
    private static func copyRows(_ db: Database, table: String, columns: [String]) throws -> Int {
        let list = columns.joined(separator: ", ")
        let insert = "INSERT OR REPLACE INTO main.\"\(table)\" (rowid, \(list)) VALUES (\(Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")))"
        var copied = 0
        var low = Int64.min
        while true {
            let (rows, failed) = read(db, "SELECT rowid, \(list) FROM damaged.\"\(table)\" WHERE rowid > ? ORDER BY rowid LIMIT 500", [low])
            copied += try write(rows, db, insert)
            low = rows.last?[0] ?? low
            if failed { break }
            if rows.count < 500 { return copied }
        }
        var high = Int64.max
        while true {
            let (rows, failed) = read(
                db, "SELECT rowid, \(list) FROM damaged.\"\(table)\" WHERE rowid < ? AND rowid > ? ORDER BY rowid DESC LIMIT 500", [high, low]
            )
            copied += try write(rows, db, insert)
            high = rows.last?[0] ?? high
            if failed || rows.count < 500 { return copied }
        }
    }

    /// The rows a query gives before it meets a damaged page, and whether it met one.
    private static func read(_ db: Database, _ sql: String, _ arguments: StatementArguments) -> (rows: [Row], failed: Bool) {
        guard let cursor = try? Row.fetchCursor(db, sql: sql, arguments: arguments) else { return ([], true) }
        var rows: [Row] = []
        while true {
            do {
                guard let row = try cursor.next() else { return (rows, false) }
                rows.append(row.copy())
            } catch {
                return (rows, true)
            }
        }
    }

    /// The check `ferry doctor` shows for a journal judged before opening: intact, recovered, or
    /// damaged with what to do.
    package static func check(_ paths: FerryPaths, fix: Bool, tables: [SQLiteTables]) -> (check: DoctorCheck, usable: Bool) {
        let journal = paths.journal
        guard let problems = damage(at: journal) else {
            return (DoctorCheck(name: "journal", status: .ok, summary: "intact; \(Doctor.describeSize(of: journal))"), true)
        }
        guard fix else {
            return (
                DoctorCheck(
                    name: "journal", status: .problem, summary: "the journal is damaged: \(journal.path)", details: problems,
                    advice: "`ferry doctor --fix` copies it aside and recovers what SQLite can read into a new journal."
                ), false
            )
        }
        do {
            let partFileIds = Doctor.partFiles(in: LibraryFolder(root: paths.library).partials, pattern: .partial).map(\.id)
            let outcome = try recover(journal, tables: tables, partFileIds: partFileIds)
            let kept = outcome.kept.filter { $0.rows > 0 }.map { "\($0.table) \($0.rows)" }.joined(separator: ", ")
            var details = problems.map { "found: \($0)" }
            return (
                DoctorCheck(
                    name: "journal", status: .warning, summary: "the journal was damaged and is recovered", details: details,
                    advice: "Check `ferry ls --all` and your podcasts; what the recovery lost is in the copy kept at \(outcome.aside.path).",
                    mended: ["copied the damaged journal to \(outcome.aside.path)", "recovered every row SQLite could still read; rows kept per table: \(kept.isEmpty ? "none" : kept)"]
                ), true
            )
        } catch {
            let message = (error as? FerryError)?.message ?? "\(error)"
            return (DoctorCheck(name: "journal", status: .problem, summary: "the journal is damaged and could not be recovered", details: problems + [message]), false)
        }
    }
}
