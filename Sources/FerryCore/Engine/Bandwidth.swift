import FerryModel
import Synchronization

/// The engine's bandwidth limiters: one for the whole daemon and one per session, shared by
/// the transfers they cover; a transfer's own limit gets a limiter of its own. A limiter changes
/// its rate in place, so transfers already running follow a new limit, a removed one, or a
/// schedule's next window.
final class Bandwidth: Sendable {
    private static let daemonKey = "*"
    private let shared = Mutex<[String: RateLimiter]>([:])
    /// The limiters of running transfers with a limit of their own, so a new one reaches them.
    private let own = Mutex<[Int64: RateLimiter]>([:])

    /// Waits, before each chunk of transfer `id` with `settings`, as every applicable limit
    /// requires; nil when no limit applies. ``release(_:)`` when it stops.
    func pace(for id: Int64, session: String, _ settings: TransferSettings) -> (@Sendable (Int) async throws -> Void)? {
        let mine = settings.own.bytesPerSecond.map { rate in
            let limiter = RateLimiter(bytesPerSecond: rate)
            own.withLock { $0[id] = limiter }
            return limiter
        }
        let limiters = [layer(Self.daemonKey, settings.daemon), layer(session, settings.session), mine].compactMap { $0 }
        if limiters.isEmpty { return nil }
        return { bytes in
            for limiter in limiters { try await limiter.consume(bytes) }
        }
    }

    /// A running transfer's own limit from now on (nil: none). - Returns: false when it runs
    /// without a limit of its own, which it gets only when it starts again.
    func setOwnLimit(_ id: Int64, bytesPerSecond: Int64?) -> Bool {
        guard let limiter = own.withLock({ $0[id] }) else { return false }
        limiter.setRate(bytesPerSecond)
        return true
    }

    func release(_ id: Int64) {
        own.withLock { $0[id] = nil }
    }

    /// A layer's limit from now on (nil: none), for the transfers already running under it too.
    /// - Parameter scheduled: a schedule may set another limit later: the limiter stays, even
    ///   without a limit, so that transfers started now follow the next window.
    func update(session: String?, bytesPerSecond: Int64?, scheduled: Bool = false) {
        let key = session ?? Self.daemonKey
        shared.withLock { limiters in
            if let existing = limiters[key] {
                existing.setRate(bytesPerSecond)
                if bytesPerSecond == nil, !scheduled { limiters[key] = nil }
            } else if bytesPerSecond != nil || scheduled {
                limiters[key] = RateLimiter(bytesPerSecond: bytesPerSecond)
            }
        }
    }

    /// A layer's shared limiter: the one its limit or schedule made, else one for its limit.
    private func layer(_ key: String, _ options: TransferOptions) -> RateLimiter? {
        shared.withLock { limiters in
            if let existing = limiters[key] { return existing }
            // A schedule's limiter is the engine's to make (``update(session:bytesPerSecond:scheduled:)``).
            guard options.schedule == nil, let bytesPerSecond = options.bytesPerSecond else { return nil }
            let created = RateLimiter(bytesPerSecond: bytesPerSecond)
            limiters[key] = created
            return created
        }
    }
}
