/// How many connections a segmented download uses. Fixed (`--connections N`), or adaptive: it
/// starts with one and doubles while the doubling raises the total throughput by at least half
/// of what it would if each connection were throttled on its own (a server's per-connection
/// limit), and stops adding for good once a doubling does not, measured twice (a fast link, a
/// busy disk, a server's overall limit). Pure: it is fed samples of the bytes so far.
struct ConnectionTuner: Sendable {
    enum Mode: Sendable, Hashable {
        case fixed(Int)
        case adaptive(maximum: Int)
    }

    let mode: Mode
    /// How long a measurement lasts, after a change has had `settle` to take effect.
    let window: Duration
    let settle: Duration
    /// Connections wanted now.
    private(set) var target: Int
    private var settled = false
    /// When the target last changed (nil before the first sample).
    private var changedAt: Duration?
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

    init(mode: Mode, limit: Double? = nil, window: Duration = .milliseconds(500), settle: Duration = .milliseconds(250)) {
        self.mode = mode
        self.limit = limit
        self.window = window
        self.settle = settle
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
        guard let changedAt else {
            self.changedAt = now
            return target
        }
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
        guard elapsed >= window else { return target }
        let rate = Double(bytes - start.bytes) / (Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds))
        if let previous {
            // With a per-connection limit, n → 2n connections doubles the rate; ask for half that gain.
            let expected = previous.rate * (1 + 0.5 * Double(target - previous.connections) / Double(previous.connections))
            if rate < expected {
                misses += 1
                if misses >= 2 { isDone = true }
                since = (now, bytes)
                return target
            }
        }
        if let limit, rate >= 0.8 * limit {
            isDone = true
            return target
        }
        misses = 0
        previous = (target, rate)
        let next = min(target * 2, maximum)
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
