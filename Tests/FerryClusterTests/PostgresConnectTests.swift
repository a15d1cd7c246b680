import FerryCluster
import FerryKit
import Foundation
import Testing

/// Joining a cluster with a database that is not there, or not a PostgreSQL URL: a clear error
/// soon, not a daemon that hangs (postgres-nio's pool tries to connect for ever).
@Suite struct PostgresConnectTests {
    @Test func anUnreachableDatabaseIsSaidSoAfterThePatience() async throws {
        let began = ContinuousClock.now
        // Port 1 on loopback: nothing listens, every connection is refused.
        let error = await #expect(throws: FerryError.self) {
            _ = try await PostgresJournal.connect(to: "postgres://ferry:secret@127.0.0.1:1/ferry", patience: .seconds(2))
        }
        #expect(error?.code == .daemonStartFailed)
        #expect(error?.message.hasPrefix("Cannot reach the database at postgres://ferry:***@127.0.0.1:1/ferry within 2 s") == true)
        #expect(error?.message.contains("secret") == false)
        // Not a timing test: a guard against the for-ever wait this replaced (10.5 s was seen
        // for the 2 s patience while the whole suite ran in parallel on two cores).
        #expect(ContinuousClock.now - began < .seconds(60))
    }

    @Test(arguments: ["mysql://db/ferry", "postgres:///ferry", "not a url"])
    func aURLThatIsNotPostgreSQLsIsRefused(_ url: String) async throws {
        let error = await #expect(throws: FerryError.self) { _ = try await PostgresJournal.connect(to: url, patience: .seconds(2)) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message.hasPrefix("A database URL is postgres://user[:password]@host[:port]/database") == true)
    }
}
