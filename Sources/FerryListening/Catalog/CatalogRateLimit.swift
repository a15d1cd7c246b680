
/// How often Ferry calls Apple's catalog. Apple asks for "approximately 20 calls per minute";
/// a short burst is allowed so that a listener's first few searches are not slowed.
package struct CatalogRateLimit: Sendable, Hashable {
    /// Calls allowed per `period`, on average.
    package var calls: Int
    package var period: Duration
    /// Calls that may go at once after a quiet spell.
    package var burst: Int
    /// Over the limit, a call waits for its turn if that comes within this time, and fails
    /// with `catalog_throttled` if not: a listener would rather retry than stare at a spinner.
    package var maxWait: Duration

    package init(calls: Int = 20, per period: Duration = .seconds(60), burst: Int = 5, maxWait: Duration = .seconds(5)) {
        precondition(calls >= 1 && burst >= 1 && period > .zero, "a rate limit needs at least one call per period and a burst of one")
        self.calls = calls
        self.period = period
        self.burst = burst
        self.maxWait = maxWait
    }

    /// Apple's published guidance: 20 calls a minute, a burst of 5, waits of up to 5 s.
    package static let apple = CatalogRateLimit()

    /// The time one call "costs".
    var interval: Duration { period / calls }
}
