import Synchronization

/// Connections open to each host across all transfers, so that segmented downloads together
/// stay under a per-host cap (``TransferOptions/maxConnectionsPerHost``, 16 by default: aria2c's
/// own maximum). A transfer's first connection always counts and is always allowed; the others
/// only while the host is under its cap.
final class HostConnections: Sendable {
    static let defaultCap = 16

    private let open = Mutex<[String: Int]>([:])
    private let peaks = Mutex<[String: Int]>([:])

    /// A transfer's first connection.
    func enter(_ host: String) {
        let now = open.withLock { open in
            open[host, default: 0] += 1
            return open[host]!
        }
        notePeak(host, now)
    }

    /// Another connection, if the host is under `cap`.
    func tryEnter(_ host: String, cap: Int) -> Bool {
        let now = open.withLock { open -> Int? in
            guard open[host, default: 0] < cap else { return nil }
            open[host, default: 0] += 1
            return open[host]!
        }
        guard let now else { return false }
        notePeak(host, now)
        return true
    }

    /// The most connections open to `host` at once so far.
    func peak(_ host: String) -> Int { peaks.withLock { $0[host, default: 0] } }

    private func notePeak(_ host: String, _ count: Int) {
        peaks.withLock { $0[host] = max($0[host, default: 0], count) }
    }

    func leave(_ host: String) {
        open.withLock { open in
            let left = open[host, default: 0] - 1
            open[host] = left > 0 ? left : nil
        }
    }

    func count(_ host: String) -> Int { open.withLock { $0[host, default: 0] } }
}
