import FerryTestSupport
import Testing

/// The test PostgreSQL itself: it starts, and each test gets a database of its own.
@Suite(.enabled(if: PostgresServer.isAvailable, "\(PostgresServer.unavailableReason ?? "")"))
struct PostgresServerTests {
    @Test func twoDatabasesAreTwo() async throws {
        let a = try await PostgresServer.newDatabase()
        let b = try await PostgresServer.newDatabase()
        #expect(a != b)
        // psql runs as a child process waited for: off the threads Swift's concurrency needs.
        let count = try await PostgresServer.offPool {
            let server = try PostgresServer.start()
            try server.psql(a, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)")
            return try server.psql(a, "SELECT count(*) FROM t")
        }
        #expect(count.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        await #expect(throws: (any Error).self) { try await PostgresServer.offPool { try PostgresServer.start().psql(b, "SELECT count(*) FROM t") } }
    }
}
