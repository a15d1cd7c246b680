import Foundation
import GRDB

extension SQLiteJournal {
    /// The boot id (`/proc/sys/kernel/random/boot_id`) of the last daemon that ran on this
    /// journal, or nil if none recorded one.
    func lastBoot() async throws -> String? {
        try await writer.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM daemon WHERE key = 'boot'")
        }
    }

    /// Records the boot the daemon now runs in.
    func recordBoot(_ boot: String) async throws {
        try await writer.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO daemon (key, value) VALUES ('boot', ?)", arguments: [boot])
        }
    }

    /// Marks the journal as in use by a running daemon. - Returns: true when the last daemon
    /// left its mark (it was killed, or the machine stopped under it): the journal deserves a
    /// check.
    func markRunning() async throws -> Bool {
        try await writer.write { db in
            let unclean = try String.fetchOne(db, sql: "SELECT value FROM daemon WHERE key = 'running'") != nil
            try db.execute(sql: "INSERT OR REPLACE INTO daemon (key, value) VALUES ('running', ?)", arguments: [String(getpid())])
            return unclean
        }
    }

    /// The daemon stopped cleanly: the next start skips the check.
    func markStopped() async throws {
        try await writer.write { db in try db.execute(sql: "DELETE FROM daemon WHERE key = 'running'") }
    }

    /// SQLite's `integrity_check`: empty when the journal is intact, else what it found (at most 20).
    package func integrityProblems() async throws -> [String] {
        try await writer.read { db in
            try String.fetchAll(db, sql: "PRAGMA integrity_check(20)").filter { $0 != "ok" }
        }
    }
}

