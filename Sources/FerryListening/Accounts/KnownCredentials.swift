import FerryKit
import Foundation
import Synchronization

/// Credentials already read, by the hash of their secret: a phone's or a script's every request
/// costs no read of the journal (bench scenario 12: the lookup was the most of a page answered
/// again). Forgotten whole whenever a credential or an account changes; a lookup that raced such
/// a change is not kept (``generation``), so a revoked token never outlives its revocation here.
/// Only where one daemon makes every change (``AccountLibrary``'s); a cluster's members read each
/// time, since another member may revoke.
final class KnownCredentials: Sendable {
    typealias Found = (credential: AccountCredentialRecord, role: AccountRole)

    private struct State {
        var generation = 0
        var entries: [String: Found] = [:]
    }

    static let capacity = 10_000
    private let state = Mutex(State())

    /// What is kept for `hash`, unless it has expired by `now`.
    func found(_ hash: String, now: Date) -> Found? {
        state.withLock { state in
            guard let found = state.entries[hash], found.credential.expiresAt.map({ $0 > now }) ?? true else { return nil }
            return found
        }
    }

    /// Where changes stand: take it before reading the journal, give it back to ``keep(_:_:read:)``.
    var generation: Int { state.withLock { $0.generation } }

    /// Keeps what was read at `generation`, unless something changed since.
    func keep(_ hash: String, _ found: Found, read generation: Int) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.entries.count >= Self.capacity { state.entries = [:] }
            state.entries[hash] = found
        }
    }

    /// Something changed: nothing kept is trusted again.
    func forget() {
        state.withLock { state in
            state.generation += 1
            state.entries = [:]
        }
    }
}
