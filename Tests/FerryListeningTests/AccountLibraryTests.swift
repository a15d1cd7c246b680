import FerryCore
import FerryKit
import Foundation
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
}
