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
}
