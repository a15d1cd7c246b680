import Synchronization

/// Connections open to each host across all transfers, so that segmented downloads together
/// stay under a per-host cap (``TransferOptions/maxConnectionsPerHost``, 16 by default: aria2c's
/// own maximum). A transfer's first connection always counts and is always allowed; the others
/// only while the host is under its cap (in a cluster, this member's share of it).
final class HostConnections: Sendable {
    static let defaultCap = 16

    private struct Counts {
        var open: [String: Int] = [:]
        /// The most open at once, by host (for tests and diagnosis).
        var peak: [String: Int] = [:]
        /// Daemons sharing each host's cap: in a cluster, the members alive (each keeps to its
        /// share of the cap, so the cap holds across the cluster); 1 on one machine.
        var sharers = 1

        mutating func add(_ host: String) {
            open[host, default: 0] += 1
            peak[host] = max(peak[host, default: 0], open[host]!)
        }
    }

    private let counts = Mutex(Counts())

    /// In a cluster: how many members share each host's cap now.
    func share(among members: Int) {
        counts.withLock { $0.sharers = max(1, members) }
    }

    /// A transfer's first connection.
    func enter(_ host: String) {
        counts.withLock { $0.add(host) }
    }

    /// Another connection, if the host is under `cap` (this daemon's share of it: never less
    /// than one connection).
    func tryEnter(_ host: String, cap: Int) -> Bool {
        counts.withLock { counts in
            guard counts.open[host, default: 0] < max(1, cap / counts.sharers) else { return false }
            counts.add(host)
            return true
        }
    }

    func leave(_ host: String) {
        counts.withLock { counts in
            let left = counts.open[host, default: 0] - 1
            counts.open[host] = left > 0 ? left : nil
        }
    }

    func count(_ host: String) -> Int { counts.withLock { $0.open[host, default: 0] } }

    /// The most connections open to `host` at once so far.
    func peak(_ host: String) -> Int { counts.withLock { $0.peak[host, default: 0] } }
}
