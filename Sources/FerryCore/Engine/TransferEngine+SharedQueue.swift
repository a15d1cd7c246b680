import FerryModel
import Foundation

/// A cluster's member: several daemons share one queue in PostgreSQL (docs/CLUSTER.md). The
/// control here knows only the transfers this member has claimed; it claims as many as it has
/// free slots, renews its claims while it works, and gives back those it is done with. A claim
/// lost (another member took the transfer, or a command from another member changed it) stops
/// its worker without a further write: the journal refuses this member's writes to it anyway.
extension TransferEngine {
    /// New transfers (or ones asked for again) to run: here at once on one machine; in a
    /// cluster, by whichever member claims them first.
    func schedule(_ records: [TransferRecord]) async {
        if leases != nil {
            claimWake.signal()
        } else {
            await input(.enqueued(records.map { ($0.transferId, TransferControl.Entry($0)) }))
        }
    }

    /// Instead of recovery on one machine: what this member's name held before (a crash, a
    /// restart) goes back to the shared queue, and the member says it is alive.
    func joinCluster() async throws {
        guard let leases else { return }
        try FileManager.default.createDirectory(at: library.partials, withIntermediateDirectories: true)
        await leases.releaseAll()
        try await leases.heartbeat()
        // Any committed change may free work to claim (a transfer queued or resumed, a slot).
        journal.onCommit { [claimWake] event in
            if event.kind != .progress { claimWake.signal() }
        }
        logger.info("joined the cluster", metadata: ["member": "\(leases.member)"])
    }

    /// Claims until shutdown (when woken, or every half second: a lapsed lease is noticed so),
    /// and beside it renews and beats three times a lease: a claim that waits (on the database,
    /// on another member's claim) never holds back the renewals that keep this member's leases.
    nonisolated func workThroughSharedQueue(_ leases: any TransferLeases) async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.keepClaims(leases) }
            while !shutdown.isFired, !Task.isCancelled {
                let seen = claimWake.generation
                await input(.claimDue)
                // A moment for the slots that free up together (transfers finishing at once) to
                // be claimed for in one go.
                try? await Task.sleep(for: .milliseconds(20))
                let wake = claimWake
                _ = try? await shutdown.race {
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask { await wake.wait(after: seen) }
                        group.addTask { try? await Task.sleep(for: .milliseconds(500)) }
                        await group.next()
                        group.cancelAll()
                    }
                }
            }
        }
    }

    /// Renews and beats every third of a lease until shutdown.
    private nonisolated func keepClaims(_ leases: any TransferLeases) async {
        while await shutdown.sleep(for: leases.leaseDuration / 3, clock: ContinuousClock()) {
            await renewClaims(leases)
        }
    }

    /// Carries out the control's claim: up to `limit` transfers from the shared queue, each
    /// taken over (its bytes, an interrupted move) before the control hears of it.
    func claim(limit: Int, sessions: [String: Int], paused: Set<String>, excluding: Set<Int64>) async {
        guard let leases else { return }
        let claimed: [TransferRecord]
        do {
            claimed = try await leases.claim(limit: limit, limits: sessions, paused: paused, excluding: excluding)
        } catch {
            logger.warning("cannot claim from the shared queue", metadata: ["error": "\(error)"])
            claimed = []
        }
        var taken: [(id: Int64, entry: TransferControl.Entry)] = []
        var moved: [TransferControl.Input] = []
        for found in claimed {
            var record = await takeOver(found, member: leases.member)
            // Its last member stopped between reserving the file's name and journaling the
            // completion: the move is finished here, or the name forgotten (never a second copy).
            if record.fileName != nil {
                if case .recoveredMove(let id, let path, let sha256)? = await finishInterruptedMove(record) {
                    moved.append(.claimedMoved(id, .init(record), path: path, sha256: sha256))
                    continue
                }
                record.fileName = nil
            }
            taken.append((record.transferId, .init(record)))
        }
        if !claimed.isEmpty { logger.debug("claimed", metadata: ["transfers": "\(claimed.map(\.transferId))"]) }
        for input in moved { await self.input(input) }
        await input(.claimed(taken))
    }

    /// A transfer another member had bytes of, as ``ClaimedBytes`` decides from its part file here.
    private func takeOver(_ record: TransferRecord, member: String) async -> TransferRecord {
        var info = stat()
        let length = stat(library.partURL(for: record).path, &info) == 0 ? Int64(info.st_size) : 0
        guard ClaimedBytes(record, partLength: length) == .startOver else { return record }
        do {
            return try await store.record(.handedOver(member: member), of: record.transferId)
        } catch {
            logger.warning("cannot journal a hand-over", metadata: ["transfer.id": "\(record.transferId)", "error": "\(error)"])
            return record
        }
    }

    /// Renews every claim (those lost stop here), and takes this member's share of each host's
    /// connection cap: the cap holds across the members alive.
    private func renewClaims(_ leases: any TransferLeases) async {
        do {
            hosts.share(among: try await leases.heartbeat())
            for id in try await leases.renew().sorted() {
                logger.warning("a transfer's claim was lost", metadata: ["transfer.id": "\(id)"])
                await input(.lost(id))
            }
        } catch {
            logger.warning("cannot renew claims", metadata: ["error": "\(error)"])
        }
    }
}
