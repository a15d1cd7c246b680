import Synchronization

/// A bandwidth limit shared by the transfers it covers (a session's, or the whole daemon's):
/// each chunk reserves its share of the timeline, and the caller waits until its reservation
/// starts. With back-pressure in the HTTP client, waiting before reading the next chunk slows
/// the sender to the limit.
final class RateLimiter: Sendable {
    private struct State {
        /// Nil: no limit (a schedule's window without one, for now).
        var bytesPerSecond: Int64?
        /// When the bytes reserved so far will have been "spent".
        var nextFree: ContinuousClock.Instant
    }

    private let state: Mutex<State>
    /// Up to this much may go at once without waiting (smooths small chunks).
    private let burst: Duration = .milliseconds(100)

    init(bytesPerSecond: Int64?) {
        state = Mutex(State(bytesPerSecond: bytesPerSecond, nextFree: .now))
    }

    var bytesPerSecond: Int64? { state.withLock { $0.bytesPerSecond } }

    func setRate(_ bytesPerSecond: Int64?) {
        state.withLock { state in
            state.bytesPerSecond = bytesPerSecond
            state.nextFree = min(state.nextFree, .now)
        }
    }

    /// Waits until `bytes` may be transferred.
    func consume(_ bytes: Int) async throws {
        let wait = state.withLock { state -> Duration in
            guard let bytesPerSecond = state.bytesPerSecond else { return .zero }
            let now = ContinuousClock.now
            let start = max(state.nextFree, now - burst)
            state.nextFree = start + .seconds(Double(bytes) / Double(max(bytesPerSecond, 1)))
            return now.duration(to: start)
        }
        if wait > .zero { try await Task.sleep(for: wait) }
    }
}
