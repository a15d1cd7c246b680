import FerryModel
import Foundation

/// A shared queue's leases (several daemons on one PostgreSQL journal): a member runs only the
/// transfers it has claimed, renews its claims while it works, and gives them back when it
/// is done with them. A claim that lapses (the member died or was cut off) lets another member
/// take the transfer; the old member's writes to it are refused from then on.
package protocol TransferLeases: Sendable {
    /// This member's name in the cluster.
    var member: String { get }

    /// How long a claim lasts unless renewed.
    var leaseDuration: Duration { get }

    /// Claims up to `limit` transfers in queue order: queued ones nobody holds, and those whose
    /// member's lease lapsed. A session in `limits` runs at most that many across the cluster;
    /// a session in `paused` gets none; those in `excluding` are not taken.
    func claim(limit: Int, limits: [String: Int], paused: Set<String>, excluding: Set<Int64>) async throws -> [TransferRecord]

    /// Renews every claim this member holds. - Returns: the transfers whose claim was lost.
    func renew() async throws -> Set<Int64>

    /// Gives a transfer back to the queue (paused, finished, or lost: then only forgotten).
    func release(_ id: Int64) async

    /// Gives every claim back (the daemon stops).
    func releaseAll() async

    /// Records that this member is alive. - Returns: how many members are, this one included.
    @discardableResult
    func heartbeat() async throws -> Int

    /// Every member, with what each runs.
    func members() async throws -> [ClusterMember]
}
