import FerryKit
import Synchronization

/// The engine's bandwidth limiters: one for the whole daemon and one per session, shared by
/// the transfers they cover; a transfer's own limit gets a limiter of its own.
final class Bandwidth: Sendable {
    private static let daemonKey = "*"
    private let shared = Mutex<[String: RateLimiter]>([:])

    /// Waits, before each chunk of a transfer with `settings`, as every applicable limit requires;
    /// nil when no limit applies.
    func pace(for session: String, _ settings: TransferSettings) -> (@Sendable (Int) async throws -> Void)? {
        let limiters = [
            limiter(Self.daemonKey, settings.daemon.bytesPerSecond),
            limiter(session, settings.session.bytesPerSecond),
            settings.own.bytesPerSecond.map { RateLimiter(bytesPerSecond: $0) },
        ].compactMap { $0 }
        if limiters.isEmpty { return nil }
        return { bytes in
            for limiter in limiters { try await limiter.consume(bytes) }
        }
    }

    /// Applies a changed limit to the transfers already running under it.
    func update(session: String?, bytesPerSecond: Int64?) {
        let key = session ?? Self.daemonKey
        shared.withLock { limiters in
            if let bytesPerSecond { limiters[key]?.setRate(bytesPerSecond) } else { limiters[key] = nil }
        }
    }

    private func limiter(_ key: String, _ bytesPerSecond: Int64?) -> RateLimiter? {
        guard let bytesPerSecond else { return nil }
        return shared.withLock { limiters in
            if let existing = limiters[key] {
                existing.setRate(bytesPerSecond)
                return existing
            }
            let created = RateLimiter(bytesPerSecond: bytesPerSecond)
            limiters[key] = created
            return created
        }
    }
}
