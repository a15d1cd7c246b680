import FerryModel
import Foundation
import Synchronization

/// The latest progress of each running transfer, in memory. Workers add bytes on every chunk
/// (a lock, no allocation); a few times a second the engine samples it into coalesced
/// `progress` events with speed and ETA. Progress is journaled only at checkpoints.
final class ProgressBoard: Sendable {
    struct Entry {
        var session: String
        var bytes: Int64
        var total: Int64?
        var bytesPerSecond: Double?
        var lastSampleBytes: Int64
        var lastSampleTime: ContinuousClock.Instant
        var lastPublishedBytes: Int64 = -1
        var connections: Int?
        var ranges: [TransferRange]?
    }

    struct Snapshot: Sendable {
        var bytes: Int64
        var total: Int64?
        var bytesPerSecond: Double?
        var connections: Int?
        var ranges: [TransferRange]?
        var etaSeconds: Double? {
            guard let total, let bytesPerSecond, bytesPerSecond > 0 else { return nil }
            return Double(max(0, total - bytes)) / bytesPerSecond
        }
    }

    private let entries = Mutex<[Int64: Entry]>([:])

    func begin(_ id: Int64, session: String, bytes: Int64, total: Int64?) {
        entries.withLock {
            $0[id] = Entry(session: session, bytes: bytes, total: total, lastSampleBytes: bytes, lastSampleTime: .now)
        }
    }

    func set(_ id: Int64, bytes: Int64, total: Int64?) {
        entries.withLock { entries in
            entries[id]?.bytes = bytes
            entries[id]?.total = total
            entries[id]?.lastSampleBytes = bytes
        }
    }

    /// A segmented download's connections and ranges now.
    func setSegments(_ id: Int64, connections: Int, ranges: [TransferRange]) {
        entries.withLock { entries in
            entries[id]?.connections = connections
            entries[id]?.ranges = ranges
        }
    }

    func add(_ id: Int64, bytes: Int) {
        entries.withLock { $0[id]?.bytes += Int64(bytes) }
    }

    /// How much of a read is counted, and waited for under a bandwidth limit, at a time.
    static let paceStep = 64 * 1024

    /// Counts a read's bytes. Under a bandwidth limit it waits for them, which holds the server
    /// back (the client reads again only when asked), 64 KiB at a time: a read is up to 256 KiB,
    /// and progress and the limit should not move a second's worth at once at 256 KiB/s.
    func count(_ id: Int64, bytes: Int, pace: (@Sendable (Int) async throws -> Void)?) async throws {
        guard let pace else { return add(id, bytes: bytes) }
        var uncounted = bytes
        while uncounted > 0 {
            let step = min(uncounted, Self.paceStep)
            add(id, bytes: step)
            try await pace(step)
            uncounted -= step
        }
    }

    func end(_ id: Int64) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }

    func snapshot(_ id: Int64) -> Snapshot? {
        entries.withLock { entries in
            entries[id].map {
                Snapshot(bytes: $0.bytes, total: $0.total, bytesPerSecond: $0.bytesPerSecond, connections: $0.connections, ranges: $0.ranges)
            }
        }
    }

    /// Updates speeds (smoothed) and returns a progress event for each transfer that moved.
    func sample(now: ContinuousClock.Instant = .now) -> [TransferEvent] {
        entries.withLock { entries in
            var events: [TransferEvent] = []
            for (id, var entry) in entries {
                let elapsed = (now - entry.lastSampleTime) / .seconds(1)
                if elapsed > 0.05 {
                    let instant = Double(entry.bytes - entry.lastSampleBytes) / elapsed
                    entry.bytesPerSecond = entry.bytesPerSecond.map { 0.7 * $0 + 0.3 * instant } ?? instant
                    entry.lastSampleBytes = entry.bytes
                    entry.lastSampleTime = now
                }
                if entry.bytes != entry.lastPublishedBytes {
                    entry.lastPublishedBytes = entry.bytes
                    let snapshot = Snapshot(bytes: entry.bytes, total: entry.total, bytesPerSecond: entry.bytesPerSecond)
                    events.append(
                        TransferEvent(
                            kind: .progress, transferId: id, session: entry.session, bytesReceived: entry.bytes,
                            totalBytes: entry.total, bytesPerSecond: entry.bytesPerSecond, etaSeconds: snapshot.etaSeconds,
                            connections: entry.connections, ranges: entry.ranges
                        )
                    )
                }
                entries[id] = entry
            }
            return events
        }
    }
}
