import FerryCluster
import FerryTestSupport
import Foundation

/// A fresh database with the cluster's schema in it, copied from one migrated once per test
/// process (`CREATE DATABASE … TEMPLATE`): forty tests starting at once no longer run forty
/// migrations at once (under load, on two cores, they outlasted the 30 s a connection waits,
/// and every contract test failed together).
enum MigratedDatabase {
    private static let template = Task<String, any Error> {
        let url = try await PostgresServer.newDatabase()
        let journal = try await PostgresJournal.connect(to: url, patience: .seconds(120))
        journal.close()
        // A template must have no connections: the closed pool's may linger a moment.
        let name = url.split(separator: "/").last.map(String.init) ?? url
        try await PostgresServer.offPool {
            try PostgresServer.start().psql(url.replacingOccurrences(of: "/\(name)", with: "/postgres"), """
                UPDATE pg_database SET datallowconn = false WHERE datname = '\(name)';
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)';
                """)
        }
        return url
    }

    /// The URL of a new database with the schema migrated.
    static func make() async throws -> String {
        let template = try await template.value
        return try await PostgresServer.offPool { try PostgresServer.start().database(template: template) }
    }
}
