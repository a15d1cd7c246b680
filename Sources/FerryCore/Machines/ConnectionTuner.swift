/// How many connections a segmented download uses. Fixed (`--connections N`), or adaptive: it
/// starts with one and multiplies them by four while that raises the total throughput (by a
/// fifth at least, above noise). Once a step does not, measured twice (a fast link, a busy disk,
/// a server's overall limit), the adding ends: the first step goes back to one stream (the
/// cheapest on a fast link), a later one only when it made the download slower. Steps of four
/// and short windows reach 16 connections in under a second: on a throttled server every second
/// at one connection costs what the whole file takes at sixteen (bench/run --only throttled).
///
/// Why a later step that brought nothing is kept: nginx's `limit_rate` lets each request's
/// first second through at once, so four young connections can look as fast as the link, and
/// sixteen no faster; back at four they would soon run at a quarter of it. Sixteen connections
/// on a link that four fill cost little.
///
/// Why not ask for the gain a per-connection limit would give (4× for 4× the connections): nginx's
/// `limit_rate` lets each response's first second through at once, so the first connection's
/// rate, measured in its first second, is inflated, and the step to four looked like no gain.
/// Pure: it is fed samples of the bytes so far.
struct ConnectionTuner: Sendable {
    enum Mode: Sendable, Hashable {
        case fixed(Int)
        case adaptive(maximum: Int)
    }

    let mode: Mode
    /// How long a measurement lasts, after a change has had `settle` to take effect.
    let window: Duration
    /// The measurement in progress lasts this long: `window`, or a second while one connection
    /// is fast enough alone.
    private var span: Duration
    let settle: Duration
    /// Connections wanted now.
    private(set) var target: Int
    private var settled = false
    /// When the target last changed: the first connection runs from the start (zero).
    private var changedAt: Duration = .zero
    /// The measurement in progress: from when, at how many bytes.
    private var since: (at: Duration, bytes: Int64) = (.zero, 0)
    /// The rate measured with the previous target.
    private var previous: (connections: Int, rate: Double)?
    private(set) var isDone: Bool
    /// Windows in a row in which the last doubling did not pay: two end the adding (one may be
    /// noise: a busy machine, a server's hiccup).
    private var misses = 0

    /// A bandwidth limit over the download (bytes a second): near it, more connections cannot help.
    let limit: Double?

    /// Each step multiplies the connections by this.
    static let growth = 4

    /// The least rise in throughput a step must bring.
    static let gain = 1.2

    /// One connection this fast (bytes a second) is no throttled one worth splitting: servers
    /// that cap each connection cap it far below (nginx's `limit_rate` is set in KB/s to a few
    /// MB/s). On loopback or a fast LAN, probing four connections only cost CPU (1 GiB took
    /// 1.31 s instead of 0.95 s: bench/run --only single).
    static let fastEnough = 64.0 * 1024 * 1024

    init(mode: Mode, limit: Double? = nil, window: Duration = .milliseconds(100), settle: Duration = .milliseconds(25)) {
        self.mode = mode
        self.limit = limit
        self.window = window
        self.settle = settle
        span = window
        switch mode {
        case .fixed(let count):
            target = max(1, count)
            isDone = true
        case .adaptive(let maximum):
            target = 1
            isDone = maximum <= 1
        }
    }

    var maximum: Int {
        switch mode {
        case .fixed(let count): max(1, count)
        case .adaptive(let maximum): max(1, maximum)
        }
    }

    /// A sample: `bytes` arrived in all by `now` (a monotonic instant as a duration), with
    /// `running` connections fetching. Returns the connections wanted.
    mutating func sample(bytes: Int64, at now: Duration, running: Int) -> Int {
        guard !isDone else { return target }
        // Until the connections asked for run and `settle` has passed, nothing is measured; if
        // they never run (a plan with too little left to share), the tuner stops asking.
        if !settled {
            guard now - changedAt >= settle else { return target }
            if running >= target {
                settled = true
                since = (now, bytes)
            } else if now - changedAt >= settle + window {
                isDone = true
            }
            return target
        }
        let start = since
        let elapsed = now - start.at
        guard elapsed >= span else { return target }
        let rate = Double(bytes - start.bytes) / (Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds))
        if previous == nil, target == 1, rate >= Self.fastEnough {
            // Nothing to split for now. Looked at again each second: a throttling server's
            // first-second burst can look this fast.
            since = (now, bytes)
            span = .seconds(1)
            return target
        }
        span = window
        if let previous {
            if rate < previous.rate * Self.gain {
                misses += 1
                since = (now, bytes)
                if misses >= 2 {
                    isDone = true
                    if previous.connections == 1 || rate * Self.gain < previous.rate { target = previous.connections }
                }
                return target
            }
        }
        if let limit, rate >= 0.8 * limit {
            isDone = true
            return target
        }
        misses = 0
        previous = (target, rate)
        let next = min(target * Self.growth, maximum)
        if next == target {
            isDone = true
            return target
        }
        target = next
        settled = false
        self.changedAt = now
        return target
    }
}
