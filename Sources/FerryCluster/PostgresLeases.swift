import FerryCore
import FerryKit
import Foundation

/// One member's claims on the shared queue in PostgreSQL: what ``TransferEngine`` runs on in
/// a cluster (``TransferLeases``).
package final class PostgresLeases: TransferLeases {
    package let journal: PostgresJournal
    package let member: String
    /// Where this member's API answers, for `ferry cluster status`.
    package let address: String?
    package let leaseDuration: Duration
    private let startedAt = Date()

    package init(journal: PostgresJournal, member: String, address: String?, leaseDuration: Duration = .seconds(10)) {
        self.journal = journal
        self.member = member
        self.address = address
        self.leaseDuration = leaseDuration
    }

    package func claim(limit: Int, limits: [String: Int], paused: Set<String>, excluding: Set<Int64>) async throws -> [TransferRecord] {
        try await journal.claim(for: member, limit: limit, lease: leaseDuration, limits: limits, paused: paused, excluding: excluding).map(\.record)
    }

    package func renew() async throws -> Set<Int64> {
        let mine = journal.held.withLock { held in held.values.filter { $0.member == member } }
        let renewed = Set(try await journal.renew(mine, lease: leaseDuration).map(\.transferId))
        // One given back meanwhile (its holder finished it) was not lost.
        let still = journal.held.withLock { held in Set(mine.filter { held[$0.transferId]?.fence == $0.fence }.map(\.transferId)) }
        return still.subtracting(renewed)
    }

    package func release(_ id: Int64) async {
        guard let lease = journal.held.withLock({ $0[id] }) else { return }
        do {
            try await journal.release(lease)
        } catch {
            // It lapses by itself.
            journal.logger.warning("cannot give a transfer back", metadata: ["transfer.id": "\(id)", "error": "\(error)"])
        }
    }

    package func releaseAll() async {
        do {
            try await journal.releaseAll(of: member)
        } catch {
            journal.logger.warning("cannot give transfers back", metadata: ["error": "\(error)"])
        }
    }

    package func heartbeat() async throws -> Int {
        try await journal.heartbeat(.init(id: member, address: address, startedAt: startedAt), aliveWithin: leaseDuration)
    }

    package func members() async throws -> [ClusterMember] {
        let holdings = try await journal.holdings()
        return try await journal.members(aliveWithin: leaseDuration).map { member, alive in
            ClusterMember(
                id: member.id, address: member.address, startedAt: member.startedAt, heartbeatAt: member.heartbeatAt, alive: alive,
                transfers: holdings[member.id] ?? []
            )
        }
    }
}
