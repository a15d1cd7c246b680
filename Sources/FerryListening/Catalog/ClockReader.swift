
/// Reads an injected `any Clock<Duration>` as the time elapsed since the reader was made.
///
/// The existential's instants cannot be subtracted from one another, so timestamps for the
/// cache and the rate limit are kept as durations instead; the clock's own type is captured
/// here, where it is known.
struct ClockReader: Sendable {
    private let elapsed: @Sendable () -> Duration

    init(_ clock: some Clock<Duration>) {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
    }

    var now: Duration { elapsed() }
}
