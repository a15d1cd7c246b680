import FerryModel
import Foundation

/// The ranges of one download fetched over several connections, as a pure machine: which
/// connections to open and to which source, which to retire, when to checkpoint, what a failed
/// connection means. ``SegmentedDownload`` keeps it under a lock and executes what it says; its
/// connections report their bytes here and take their ranges from here.
///
/// The ``SegmentPlan`` shares out the ranges, the ``ConnectionTuner`` sizes the crowd, the
/// ``DownloadSources`` judge each source's failures. Time is the attempt's own (a `Duration`
/// since it began), so tables can drive it.
struct SegmentedAttempt: Sendable {
    struct Settings: Sendable, Hashable {
        var mode: ConnectionTuner.Mode
        /// The tightest bandwidth limit over the download, if any.
        var bytesPerSecond: Int64?
        /// A connection quiet this long gives up its remaining range to the next that asks.
        var stallAfter: Duration = .seconds(5)
        var minimumSplit: Int64 = SegmentPlan.minimumSplit
        /// Failed connections in a row, without a byte between them, before the attempt fails.
        var failuresInARow = 4
        var checkpointBytes: Int64 = 8 << 20
        var checkpointMaxInterval: Duration = .seconds(2)
    }

    enum Action: Sendable, Hashable {
        /// Start connection `connection` to `source` after `delay`; `counted`: it entered its
        /// host's cap (the transfer's own connection is counted by its worker).
        case open(connection: Int, source: Int, counted: Bool, after: Duration = .zero)
        /// fsync the part file, then journal the durable ranges.
        case checkpoint
        /// Journal that a source is no longer used, and for good or for this attempt.
        case dropSource(URL, reason: String, forGood: Bool)
        /// Every connection stops; the file changed: the download starts over.
        case restart(reason: String)
        /// Every connection stops; the attempt fails with this error.
        case fail(Failure)
        /// Every byte is written.
        case finish
    }

    /// A connection's error, compared by what it says (for tables).
    struct Failure: Sendable, Hashable {
        let error: any Error
        static func == (a: Self, b: Self) -> Bool { "\(a.error)" == "\(b.error)" }
        func hash(into hasher: inout Hasher) { hasher.combine("\(error)") }
    }

    /// A connection slow at two looks in a row is stopped only among this many: with fewer, the
    /// others may not fill the link without it.
    static let replacingAmong = 8

    let settings: Settings
    private(set) var plan: SegmentPlan
    private var tuner: ConnectionTuner
    private(set) var sources: DownloadSources
    /// Connections running (or about to start).
    private(set) var alive: Set<Int> = []
    /// Connections told to stop after their current write: their ranges go to the others.
    private(set) var retired: Set<Int> = []
    /// How many connections the tuner wants, as of the last tick.
    private(set) var target = 1
    private var sourceOf: [Int: Int] = [:]
    /// When each connection last received a byte (or started).
    private var lastByte: [Int: Duration] = [:]
    /// Bytes each connection received, and the counts at the last look at their rates.
    private var connectionBytes: [Int: Int64] = [:]
    private var ratedBytes: [Int: Int64] = [:]
    /// Connections far slower than the others at the last look (``laggards(_:since:)``).
    private var slow: Set<Int> = []
    /// Stuck connections stopped without a replacement: the target is this much lower.
    private var shed = 0
    private var nextConnection = 0
    private var receivedBytes: Int64 = 0
    /// How much a connection asks for at a time (``SegmentPlan/requestSize(rate:connections:unasked:alone:minimumSplit:)``).
    private var requestSize: Int64 = .max
    /// The download's rate, smoothed over about half a second, sizes the requests.
    private var rate = 0.0
    private var sampled: (at: Duration, bytes: Int64) = (.zero, 0)
    private var rated: Duration = .zero
    private var checkpointed: Int64
    private var lastCheckpoint: Duration = .zero

    init(plan: SegmentPlan, sources: DownloadSources, settings: Settings) {
        self.plan = plan
        self.sources = sources
        self.settings = settings
        tuner = ConnectionTuner(mode: settings.mode, limit: settings.bytesPerSecond.map(Double.init))
        checkpointed = plan.writtenBytes
    }

    // MARK: - The coordinator's inputs

    /// The first connection, to the reference, with the response already accepted if there is one.
    mutating func begin() -> [Action] {
        [open(source: 0, at: .zero, counted: false)]
    }

    /// A look at the download (every few tens of milliseconds): more connections or fewer,
    /// stuck ones stopped, a checkpoint when due.
    /// - Parameter hostAdmits: enters one more connection to a host if its cap allows.
    mutating func tick(at now: Duration, hostAdmits: (String) -> Bool) -> [Action] {
        if plan.isComplete { return [.finish] }
        var actions: [Action] = []
        target = sampleRate(at: now)
        if alive.isEmpty, let source = sourcesByLoad().first { actions.append(open(source: source, at: now, counted: false)) }
        if now - rated >= .milliseconds(500) {
            rated = now
            stopStuckConnections()
        }
        // Fewer wanted: the newest connections stop, leaving their ranges to the rest.
        if alive.count > target { retired.formUnion(alive.sorted().suffix(alive.count - target)) }
        // All the connections the tuner asks for at once (each takes its range when it starts,
        // so the plan is asked again for each).
        while alive.count < target, plan.hasWorkToShare,
            let source = sourcesByLoad().first(where: { hostAdmits(sources.all[$0].host) })
        {
            actions.append(open(source: source, at: now, counted: true))
        }
        let written = plan.writtenBytes
        if written - checkpointed >= settings.checkpointBytes
            || (written > checkpointed && now - lastCheckpoint >= settings.checkpointMaxInterval)
        {
            checkpointed = written
            lastCheckpoint = now
            actions.append(.checkpoint)
        }
        return actions
    }

    /// A connection ended: its range is back in the plan; an error is judged against its source.
    mutating func ended(_ connection: Int, error: (any Error)?, at now: Duration) -> [Action] {
        alive.remove(connection)
        var actions: [Action] = []
        if let error, !(error is CancellationError) {
            // The part file failed (a full disk): no other connection can do better.
            if let failure = error as? FerryError, failure.code == .diskFull || failure.code == .fileSystem {
                return [.fail(Failure(error: error))]
            }
            let source = sourceOf[connection] ?? 0
            switch sources.failed(source, error: error, limit: settings.failuresInARow) {
            case .retry: break
            case .restart(let reason): return [.restart(reason: reason)]
            case .fail: return [.fail(Failure(error: error))]
            case .drop(let reason, let forGood):
                actions.append(.dropSource(sources.all[source].url, reason: reason, forGood: forGood))
                // Its other connections stop; their ranges go to the others.
                retired.formUnion(alive.filter { sourceOf[$0] == source })
                if sources.live.isEmpty { return actions + [.fail(Failure(error: error))] }
            }
            if alive.isEmpty, !plan.isComplete, let next = sourcesByLoad().first {
                // Every connection is gone: one more, after a pause that grows with the failures.
                let pause = Duration.milliseconds(100 * max(1, sources.failures(next)))
                actions.append(open(source: next, at: now, counted: false, after: pause))
            }
        }
        return plan.isComplete ? actions + [.finish] : actions
    }

    // MARK: - A connection's inputs

    /// The next range for a connection, or nil when it is retired or nothing is left. The first
    /// response runs to the end of what it was asked for (the whole file, or until another
    /// connection takes the upper part).
    mutating func take(for connection: Int, first: Bool, at now: Duration) -> SegmentPlan.Assignment? {
        guard !retired.contains(connection) else { return nil }
        let stalled = Set(lastByte.filter { now - $0.value >= settings.stallAfter }.keys).union(slow)
        return plan.take(for: connection, size: first ? .max : requestSize, stalled: stalled)
    }

    /// Bytes arrived on a connection for its assignment: how many are its range's, and whether
    /// its range was cut short (another connection took its upper part, or it was retired). A
    /// range that reaches the end it asked for reads on to the response's end, so its connection
    /// can serve the next request.
    mutating func received(_ count: Int64, on connection: Int, for assignment: SegmentPlan.Assignment, at now: Duration) -> (taken: Int64, cut: Bool) {
        guard !retired.contains(connection) else { return (0, true) }
        let taken = plan.accept(count, for: assignment.segment)
        receivedBytes += taken
        sources.received(taken, from: sourceOf[connection] ?? 0)
        connectionBytes[connection, default: 0] += taken
        lastByte[connection] = now
        let cut = plan.segments[assignment.segment].map { $0.received >= $0.end && $0.end < assignment.to } ?? true
        return (taken, cut)
    }

    /// Bytes of a range reached the part file: how far the file is written from its start.
    mutating func wrote(_ segment: Int, through offset: Int64) -> Int64 {
        plan.wrote(segment, through: offset)
        return plan.writtenPrefix
    }

    /// A connection is done with a range (finished or failed): what is left of it is free.
    mutating func release(_ segment: Int) {
        plan.release(segment)
    }

    /// A response ended before its range did (and its connection was not retired).
    func endedShort(_ connection: Int, segment: Int) -> Bool {
        !retired.contains(connection) && (plan.segments[segment].map { $0.written < $0.end } ?? false)
    }

    /// Ranges written before an fsync became durable after it: the ranges to journal.
    mutating func madeDurable(_ written: [Int: Int64]) -> [(start: Int64, durable: Int64, end: Int64)] {
        plan.madeDurable(written)
        return plan.durableRanges
    }

    /// The ranges with the bytes of each in the file, for progress.
    var shownRanges: [TransferRange] {
        Self.shown(plan.ordered.map { TransferRange(start: $0.segment.start, end: $0.segment.end, bytes: $0.segment.written - $0.segment.start) })
    }

    // MARK: - Decisions

    private mutating func open(source: Int, at now: Duration, counted: Bool, after delay: Duration = .zero) -> Action {
        let connection = nextConnection
        nextConnection += 1
        lastByte[connection] = now + delay
        connectionBytes[connection] = 0
        sourceOf[connection] = source
        alive.insert(connection)
        return .open(connection: connection, source: source, counted: counted, after: delay)
    }

    /// The live sources, fewest connections first (then in order).
    private func sourcesByLoad() -> [Int] {
        let load = Dictionary(grouping: alive, by: { sourceOf[$0] ?? 0 }).mapValues(\.count)
        return sources.live.sorted { (load[$0] ?? 0, $0) < (load[$1] ?? 0, $1) }
    }

    /// Updates the smoothed rate and the request size; returns the connections wanted.
    private mutating func sampleRate(at now: Duration) -> Int {
        let elapsed = (now - sampled.at) / .seconds(1)
        if elapsed > 0 {
            let weight = min(1, elapsed / 0.5)
            rate += weight * (Double(receivedBytes - sampled.bytes) / elapsed - rate)
            sampled = (now, receivedBytes)
        }
        let target = max(1, tuner.sample(bytes: receivedBytes, at: now, running: alive.count) - shed)
        requestSize = SegmentPlan.requestSize(
            rate: rate, connections: max(alive.count, target), unasked: plan.unasked, alone: tuner.isDone && target == 1,
            minimumSplit: settings.minimumSplit
        )
        return target
    }

    /// Slow at two looks in a row, among many: a connection that joined a full link and lost a
    /// packet early crawls for seconds at a tiny window, and its range holds back the file's
    /// prefix (the hash waits for it). It stops, and its range goes to the next connection that
    /// asks. No new one takes its place: it would join the same full link.
    private mutating func stopStuckConnections() {
        let slow = Self.laggards(connectionBytes, since: ratedBytes)
        let stuck = alive.count - retired.count >= Self.replacingAmong ? slow.intersection(self.slow) : []
        retired.formUnion(stuck)
        shed += stuck.count
        self.slow = slow
        ratedBytes = connectionBytes.filter { alive.contains($0.key) }
    }

    /// Connections that received under a quarter of the median since the last look, among four
    /// or more that were there then: a newcomer starved by a full link crawls for seconds without
    /// going quiet, and at the end the others would wait for it. Like a stalled one, its whole
    /// remainder goes to the next connection that asks when nothing else is left.
    static func laggards(_ bytes: [Int: Int64], since previous: [Int: Int64]) -> Set<Int> {
        let deltas = previous.compactMap { connection, before in bytes[connection].map { (connection, $0 - before) } }
        guard deltas.count >= 4 else { return [] }
        let median = deltas.map(\.1).sorted()[deltas.count / 2]
        guard median > 0 else { return [] }
        return Set(deltas.filter { $0.1 * 4 < median }.map(\.0))
    }

    /// Ranges as people see them: a whole range joins the one after it (its bytes and the next
    /// one's still fill from the start), so with bounded requests there is a piece per range
    /// being fetched, plus what nobody fetches yet, not one per request.
    static func shown(_ ranges: [TransferRange]) -> [TransferRange] {
        var shown: [TransferRange] = []
        for range in ranges {
            if let last = shown.last, last.bytes == last.end - last.start, last.end == range.start {
                shown[shown.count - 1] = TransferRange(start: last.start, end: range.end, bytes: last.bytes + range.bytes)
            } else {
                shown.append(range)
            }
        }
        return shown
    }
}

/// The file changed on the server (a `200` to a range request, another validator or length):
/// the download starts over.
struct FileChanged: Error {
    var reason: String
}
