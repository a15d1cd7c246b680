import FerryTestSupport
import Testing

/// The test PostgreSQL itself: it starts, and each test gets a database of its own.
@Suite(.enabled(if: PostgresServer.isAvailable, "\(PostgresServer.unavailableReason ?? "")"))
struct PostgresServerTests {
    @Test func twoDatabasesAreTwo() async throws {
        let a = try await PostgresServer.newDatabase()
        let b = try await PostgresServer.newDatabase()
        #expect(a != b)
        let server = try PostgresServer.start()
        try server.psql(a, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)")
        #expect(try server.psql(a, "SELECT count(*) FROM t").trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        #expect(throws: (any Error).self) { try server.psql(b, "SELECT count(*) FROM t") }
    }
}
