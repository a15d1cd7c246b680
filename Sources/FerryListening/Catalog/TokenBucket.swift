
/// A token bucket as a pure value: it refills one token per `interval` up to `burst`, and
/// each call takes one. Kept as the time at which the bucket will next be full (the "generic
/// cell rate algorithm" form), so it is exact with `Duration`s and has no floating point.
///
/// A call that must wait reserves its token, so callers queue in order instead of all waking
/// at once; a call that would wait too long takes nothing and is told when to come back.
struct TokenBucket: Sendable, Equatable {
    enum Decision: Sendable, Equatable {
        /// Go ahead.
        case now
        /// Your token is reserved: go after this long.
        case after(Duration)
        /// No token within `maxWait`; one will be free after this long.
        case refused(retryAfter: Duration)
    }

    let limit: CatalogRateLimit
    /// When every token taken so far will have been paid back.
    private(set) var paidUpAt: Duration

    init(limit: CatalogRateLimit, now: Duration = .zero) {
        self.limit = limit
        paidUpAt = now
    }

    /// Takes a token at time `now` (any monotonic time base, as long as it is always the same).
    mutating func take(at now: Duration) -> Decision {
        let paidUp = max(paidUpAt, now) + limit.interval
        let wait = paidUp - now - limit.interval * limit.burst
        if wait <= .zero {
            paidUpAt = paidUp
            return .now
        }
        if wait <= limit.maxWait {
            paidUpAt = paidUp
            return .after(wait)
        }
        return .refused(retryAfter: wait)
    }

    /// Returns a token reserved by `take` that was not used (its caller was cancelled while
    /// waiting), so that a listener typing ahead is not refused for searches never sent.
    mutating func giveBack() {
        paidUpAt -= limit.interval
    }
}
