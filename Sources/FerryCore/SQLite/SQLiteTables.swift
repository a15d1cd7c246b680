import GRDB

/// A module's tables in the SQLite journal: their migrations, and which finished transfers their
/// rows still name. The transfer engine owns transfers, events, sessions and boots
/// (``transfers``); the listening library and the aria2 RPC register their own, so FerryCore
/// names no other module's table.
package struct SQLiteTables: Sendable {
    /// A migration. Shipped ones never change: a journal knows them by identity. Every module's
    /// run in the order of their versions (one version's in the order the modules are given,
    /// the transfer engine's first), so a module's tables come after those they name.
    package struct Migration: Sendable {
        package var version: Int
        package var identity: String
        package var body: @Sendable (Database) throws -> Void

        package init(_ version: Int, _ identity: String, _ body: @escaping @Sendable (Database) throws -> Void) {
            self.version = version
            self.identity = identity
            self.body = body
        }
    }

    package var migrations: [Migration]
    /// Whether a row of these tables names a completed transfer, asked in the transaction that
    /// takes it off the list: such a transfer is hidden instead of deleted, so that what the
    /// row names (a song, an episode) stays downloaded while its file is there.
    package var namesTransfer: (@Sendable (Database, _ transferId: Int64) throws -> Bool)?

    package init(migrations: [Migration], namesTransfer: (@Sendable (Database, _ transferId: Int64) throws -> Bool)? = nil) {
        self.migrations = migrations
        self.namesTransfer = namesTransfer
    }

    /// The migrations this build knows for a journal of the transfers' tables and `tables`, by
    /// their identifiers (what `grdb_migrations` records): a journal that applied others was
    /// written by a newer Ferry.
    package static func knownMigrations(_ tables: [SQLiteTables]) -> [String] {
        migrator([.transfers] + tables).migrations
    }

    /// Every module's migrations, by version.
    static func migrator(_ all: [SQLiteTables]) -> DatabaseMigrator {
        let ordered = all.enumerated().flatMap { module, tables in tables.migrations.map { (module, $0) } }
            .enumerated().sorted { ($0.element.1.version, $0.element.0, $0.offset) < ($1.element.1.version, $1.element.0, $1.offset) }
            .map(\.element.1)
        var migrator = DatabaseMigrator()
        var seen: Set<String> = []
        for migration in ordered {
            precondition(seen.insert(migration.identity).inserted, "two migrations are '\(migration.identity)'")
            migrator.registerMigration(migration.identity, migrate: migration.body)
        }
        return migrator
    }
}
