import FerryCore
import FerryKit
import Foundation
import GRDB

/// `ferry backup` and `ferry restore`. A backup is one SQLite file: a consistent snapshot of the
/// journal taken with SQLite's online backup (the daemon may go on writing), without its
/// secrets, plus a `ferryBackup` table saying what wrote it (the journal's migrations, the old
/// library folder), the listeners' settings, and the secrets sealed with a passphrase when asked.
/// Restoring writes it into an empty state folder as the journal, puts the secrets back when the
/// passphrase opens them, and finds the library's files where the new library folder has them.
package enum JournalBackup {
    /// The backup file's own format; a newer one is refused by name.
    static let format = 1
    static let settingFiles = ["remote.json", "sync.json", "aria2-rpc"]

    package struct Summary: Codable, Sendable, Hashable {
        package var file: String
        package var bytes: Int64
        package var transfers: Int
        package var podcasts: Int
        package var accounts: Int
        package var secrets: Bool
    }

    /// Writes a backup of the journal at `paths` to `file` (made 0600 by a rename, so a reader
    /// never sees half of one).
    /// - Parameter passphrase: seals the secrets into the backup; nil leaves them out.
    package static func write(paths: FerryPaths, to file: URL, passphrase: String?, now: Date = Date()) throws -> Summary {
        guard FileManager.default.fileExists(atPath: paths.journal.path) else {
            throw FerryError(.notFound, "There is no journal at \(paths.journal.path) to back up.")
        }
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(getpid()).partial")
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: temporary.path + suffix) }
        let made = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard made >= 0 else { throw FerryError(.fileSystem, "Cannot write \(file.path): \(String(cString: strerror(errno))).") }
        close(made)
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            let source = try DatabaseQueue(path: paths.journal.path, configuration: configuration)
            let snapshot = try DatabaseQueue(path: temporary.path)
            // One step: a consistent snapshot under one read transaction, the daemon writing on in WAL.
            try source.backup(to: snapshot)
            try source.close()
            let summary = try snapshot.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                try db.inTransaction {
                    let secrets = try BackupSecrets.extract(from: db, state: paths.state)
                    try db.execute(sql: "CREATE TABLE ferryBackup (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
                    let migrations = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
                    var entries: [String: DatabaseValueConvertible] = [
                        "format": String(format), "ferryVersion": FerryVersion.current, "createdAt": ISO8601DateFormatter().string(from: now),
                        "library": paths.library.standardizedFileURL.path, "migrations": String(decoding: try JSONEncoder().encode(migrations), as: UTF8.self),
                    ]
                    for name in settingFiles {
                        if let data = FileManager.default.contents(atPath: paths.state.appendingPathComponent(name).path) { entries["setting:\(name)"] = data }
                    }
                    if let passphrase, !secrets.isEmpty {
                        entries["secrets"] = try JSONEncoder().encode(try SealedSecrets.seal(secrets, passphrase: passphrase))
                    }
                    for (key, value) in entries {
                        try db.execute(sql: "INSERT INTO ferryBackup (key, value) VALUES (?, ?)", arguments: [key, value])
                    }
                    return .commit
                }
                // The stripped secrets' old pages go with the free pages.
                try db.execute(sql: "VACUUM")
                return Summary(
                    file: file.path, bytes: 0, transfers: try Int.fetchOne(db, sql: "SELECT count(*) FROM transfer") ?? 0,
                    podcasts: try Int.fetchOne(db, sql: "SELECT count(*) FROM podcast") ?? 0,
                    accounts: try Int.fetchOne(db, sql: "SELECT count(*) FROM account") ?? 0,
                    secrets: try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM ferryBackup WHERE key = 'secrets')") ?? false
                )
            }
            try snapshot.close()
            let descriptor = open(temporary.path, O_RDONLY | O_CLOEXEC)
            if descriptor >= 0 {
                fsync(descriptor)
                close(descriptor)
            }
            guard rename(temporary.path, file.path) == 0 else {
                throw FerryError(.fileSystem, "Cannot write \(file.path): \(String(cString: strerror(errno))).")
            }
            var done = summary
            done.bytes = Doctor.fileSize(file.path) ?? 0
            return done
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    package struct Restored: Codable, Sendable, Hashable {
        package var transfers: Int
        package var podcasts: Int
        package var accounts: Int
        /// Finished transfers whose file is where the library (or its folder) has it.
        package var filesFound: Int
        /// Those whose file is not there (yet): the old path, for the user to copy.
        package var filesMissing: [String]
        package var secrets: Bool
        /// The library folder the backup was made with.
        package var oldLibrary: String
        package var writtenBy: String
    }

    /// What a backup says about itself, before anything is written.
    package struct Manifest: Sendable {
        package var format: Int
        package var ferryVersion: String
        package var library: String
        package var migrations: [String]
        package var hasSecrets: Bool
    }

    package static func manifest(of file: URL) throws -> Manifest {
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: file.path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                guard try db.tableExists("ferryBackup") else { throw FerryError(.invalidRequest, "\(file.path) is not a Ferry backup.") }
                func text(_ key: String) throws -> String? { try String.fetchOne(db, sql: "SELECT value FROM ferryBackup WHERE key = ?", arguments: [key]) }
                let migrations = try text("migrations").flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) } ?? []
                return Manifest(
                    format: Int(try text("format") ?? "") ?? 0, ferryVersion: try text("ferryVersion") ?? "unknown",
                    library: try text("library") ?? "", migrations: migrations, hasSecrets: try text("secrets") != nil
                )
            }
        } catch let error as FerryError {
            throw error
        } catch {
            throw FerryError(.invalidRequest, "\(file.path) is not a Ferry backup (\(error)).")
        }
    }

    /// Restores `file` into `paths`, whose state folder must hold no journal with anything in it
    /// (the caller holds the daemon's lock).
    /// - Parameter passphrase: opens the backup's secrets; nil restores without them.
    /// - Throws: `invalid_request` for a newer backup or a used state folder, `unauthorized` for
    ///   a wrong passphrase; nothing is written then.
    package static func restore(_ file: URL, into paths: FerryPaths, passphrase: String?, tables: [SQLiteTables]) throws -> Restored {
        let manifest = try manifest(of: file)
        let unknown = Set(manifest.migrations).subtracting(SQLiteTables.knownMigrations(tables))
        guard manifest.format <= format, unknown.isEmpty else {
            throw FerryError(
                .invalidRequest,
                "This backup was written by Ferry \(manifest.ferryVersion), newer than this one (\(FerryVersion.current)): its journal has "
                    + (unknown.isEmpty ? "a backup format (\(manifest.format)) this Ferry does not read" : "changes this Ferry does not know (\(unknown.sorted().prefix(3).joined(separator: ", ")))")
                    + ". Install that version of Ferry or a newer one to restore it."
            )
        }
        try requireEmpty(paths)
        // Opened before anything is written: a wrong passphrase leaves the machine as it was.
        let secrets = try passphrase.map { passphrase in
            try sealed(in: file).map { try $0.open(passphrase: passphrase) }
        } ?? nil
        try FileManager.default.createDirectory(at: paths.state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: paths.journal.path + suffix) }
        let made = open(paths.journal.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if made >= 0 { close(made) }
        // The backup is a file from elsewhere: it is read into a scratch copy, its triggers and
        // views dropped before anything there changes, and its rows copied by column name into a
        // journal this build's migrations make (``JournalRecovery/salvage(from:into:partFileIds:)``),
        // so nothing of its schema comes along (a trigger in a crafted backup could otherwise
        // write a hook into a session's options).
        let scratch = paths.state.appendingPathComponent("journal-restoring.sqlite")
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: scratch.path + suffix) } }
        do {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: scratch.path + suffix) }
            // It holds the secrets once they are applied: the owner's alone, as the journal.
            let scratchFile = open(scratch.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if scratchFile >= 0 { close(scratchFile) }
            var readOnly = Configuration()
            readOnly.readonly = true
            let source = try DatabaseQueue(path: file.path, configuration: readOnly)
            let target = try DatabaseQueue(path: scratch.path)
            try source.backup(to: target)
            try source.close()
            var settings: [String: Data] = [:]
            try target.writeWithoutTransaction { db in
                for row in try Row.fetchAll(db, sql: "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view')") {
                    let type: String = row["type"], name: String = row["name"]
                    try db.execute(sql: "DROP \(type == "view" ? "VIEW" : "TRIGGER") \"\(name.replacingOccurrences(of: "\"", with: "\"\""))\"")
                }
            }
            try target.write { db in
                for row in try Row.fetchAll(db, sql: "SELECT key, value FROM ferryBackup WHERE key LIKE 'setting:%'") {
                    let key: String = row["key"]
                    settings[String(key.dropFirst("setting:".count))] = row["value"]
                }
                try db.execute(sql: "DROP TABLE ferryBackup")
                // This journal has not been run by a daemon yet: no check owed, no old boot.
                try db.execute(sql: "DELETE FROM daemon WHERE key IN ('running', 'boot')")
                try relocate(db, from: manifest.library, to: paths.library.standardizedFileURL.path)
                try secrets?.apply(to: db, state: paths.state)
            }
            try target.close()
            try SQLiteJournal.open(at: paths.journal, tables: tables).writer.close()
            _ = try JournalRecovery.salvage(from: scratch, into: paths.journal, partFileIds: [])
            for (name, data) in settings where settingFiles.contains(name) {
                try data.write(to: paths.state.appendingPathComponent(name), options: .atomic)
            }
            // Opened as the daemon opens it: WAL, incremental vacuum, this build's migrations.
            let journal = try SQLiteJournal.open(at: paths.journal, tables: tables)
            let library = LibraryFolder(root: paths.library)
            let restored = try journal.writer.read { db in
                var found = 0
                var missing: [String] = []
                for record in try TransferRecord.filter(Column("state") == TransferState.completed.rawValue).fetchAll(db) {
                    guard let path = record.filePath(in: library) else { continue }
                    if FileManager.default.fileExists(atPath: path) { found += 1 } else { missing.append(path) }
                }
                return Restored(
                    transfers: try Int.fetchOne(db, sql: "SELECT count(*) FROM transfer") ?? 0,
                    podcasts: try Int.fetchOne(db, sql: "SELECT count(*) FROM podcast") ?? 0,
                    accounts: try Int.fetchOne(db, sql: "SELECT count(*) FROM account") ?? 0,
                    filesFound: found, filesMissing: missing, secrets: secrets != nil, oldLibrary: manifest.library, writtenBy: manifest.ferryVersion
                )
            }
            try journal.writer.close()
            return restored
        } catch {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: paths.journal.path + suffix) }
            throw error
        }
    }

    static func sealed(in file: URL) throws -> SealedSecrets? {
        var readOnly = Configuration()
        readOnly.readonly = true
        let queue = try DatabaseQueue(path: file.path, configuration: readOnly)
        defer { try? queue.close() }
        guard let data = try queue.read({ db in try Data.fetchOne(db, sql: "SELECT value FROM ferryBackup WHERE key = 'secrets'") }) else { return nil }
        return try JSONDecoder().decode(SealedSecrets.self, from: data)
    }

    /// A restore never mixes two journals: the state folder may hold a journal only if it is empty
    /// (a daemon started once and did nothing).
    static func requireEmpty(_ paths: FerryPaths) throws {
        guard FileManager.default.fileExists(atPath: paths.journal.path), Doctor.fileSize(paths.journal.path) ?? 0 > 0 else { return }
        let used: Bool
        do {
            let queue = try DatabaseQueue(path: paths.journal.path)
            defer { try? queue.close() }
            used = try queue.read { db in
                for table in ["transfer", "podcast", "account"] where try db.tableExists(table) {
                    if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table))") == true { return true }
                }
                return false
            }
        } catch {
            used = true
        }
        guard !used else {
            throw FerryError(
                .invalidRequest,
                "\(paths.state.path) already has a journal with transfers, podcasts or accounts; a restore goes into an empty Ferry (move that folder aside, or set FERRY_HOME to a new one)."
            )
        }
    }

    /// Paths the backup named under its library folder, moved under this one (a chosen download
    /// folder inside the old library goes with it; one elsewhere stays as it was).
    static func relocate(_ db: Database, from old: String, to new: String) throws {
        guard !old.isEmpty, old != new else { return }
        let prefix = old.hasSuffix("/") ? old : old + "/"
        try db.execute(
            sql: "UPDATE transfer SET directory = ? || substr(directory, ?) WHERE directory = ? OR substr(directory, 1, ?) = ?",
            arguments: [new, old.unicodeScalars.count + 1, old, prefix.unicodeScalars.count, prefix]
        )
    }
}
