import FerryCore
import FerryKit
import Foundation
import Synchronization
import Testing

@testable import FerryListening

/// Passwords and the names behind them: a name that is not an account costs a login the same
/// scrypt a wrong password does, so timing does not tell which names exist.
@Suite struct AccountLibraryTests {
    @Test func anUnknownNameTakesAsLongAsAWrongPassword() async throws {
        let accounts = AccountLibrary(store: SQLiteListeningStore(try SQLiteJournal.inMemory(tables: [.listening])))
        _ = try await accounts.add("alice", password: "alice's password", role: .member)
        func seconds(_ name: String, _ password: String) async -> Double {
            let start = ContinuousClock.now
            #expect(await accounts.verify(name, password: password) == nil)
            let elapsed = start.duration(to: .now)
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
        var wrong: [Double] = [], unknown: [Double] = [], invalid: [Double] = []
        for _ in 0..<3 {
            wrong.append(await seconds("alice", "not her password"))
            unknown.append(await seconds("nobody", "not her password"))
            invalid.append(await seconds(String(repeating: "x", count: 200), "not her password"))
        }
        // One scrypt each (0.1 to 1.4 s here, by the load beside it); a lookup alone takes well
        // under a millisecond (0.5 ms measured with the decoy skipped). A twentieth of a wrong
        // password's time tells the two apart under any load the suite puts beside it.
        let typical = wrong.sorted()[1]
        #expect(unknown.min()! > typical / 20, "unknown \(unknown) against wrong \(wrong)")
        #expect(invalid.min()! > typical / 20, "an invalid name \(invalid) against wrong \(wrong)")
        #expect(await accounts.verify("alice", password: "alice's password") == .member)
    }

    /// Credentials kept in memory (one daemon) answer as the journal would at every moment: a
    /// revoked token, a signed-out session, a new role, a removed account and an expired session
    /// all count from the next request, as with `keepsCredentials` off.
    @Test(arguments: [false, true]) func keptCredentialsFollowEveryChangeAtOnce(_ keeps: Bool) async throws {
        let now = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
        let accounts = AccountLibrary(
            store: SQLiteListeningStore(try SQLiteJournal.inMemory(tables: [.listening])), keepsCredentials: keeps, clock: { now.withLock { $0 } }
        )
        _ = try await accounts.add("alice", password: "alice's password", role: .member)
        let token = try await accounts.makeToken(for: "alice", label: "script").token
        let session = try await accounts.startSession(for: "alice", userAgent: nil, address: nil)
        for _ in 0..<3 { #expect(try await accounts.identity(secret: token, address: nil)?.role == .member) }

        _ = try await accounts.update("alice", password: nil, role: .admin)
        #expect(try await accounts.identity(secret: token, address: nil)?.role == .admin, "a new role at once")
        #expect(try await accounts.identity(secret: session, address: nil)?.user == "alice")
        try await accounts.end(.token, of: "alice")
        #expect(try await accounts.identity(secret: token, address: nil) == nil, "a revoked token")
        #expect(try await accounts.identity(secret: session, address: nil) != nil)
        now.withLock { $0 += AccountLibrary.sessionLifetime + 1 }
        #expect(try await accounts.identity(secret: session, address: nil) == nil, "an expired session")

        now.withLock { $0 = Date(timeIntervalSince1970: 1_700_000_000) }
        let second = try await accounts.startSession(for: "alice", userAgent: nil, address: nil)
        #expect(try await accounts.identity(secret: second, address: nil) != nil)
        try await accounts.endSession(secret: second)
        #expect(try await accounts.identity(secret: second, address: nil) == nil, "a signed-out session")
        let third = try await accounts.makeToken(for: "alice", label: nil).token
        #expect(try await accounts.identity(secret: third, address: nil) != nil)
        try await accounts.remove("alice")
        #expect(try await accounts.identity(secret: third, address: nil) == nil, "a removed account")
    }
}
