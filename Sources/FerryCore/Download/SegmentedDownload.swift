import AsyncHTTPClient
import FerryKit
import Foundation
import Logging
import NIOCore
import Synchronization

/// One attempt of a download over several connections, each fetching a range of the file into
/// the same part file (``RangeFile``), as the ``SegmentPlan`` shares them out and the
/// ``ConnectionTuner`` sizes them, from the download's URL and its mirrors
/// (``DownloadSources``: each new connection goes to the server with the fewest). Every range
/// request carries `If-Range` with the download's validator: a `200`, or another validator,
/// means the file changed (``FileChanged``), and every connection stops; from a mirror it means
/// the mirror's copy differs, and the mirror is dropped. Checkpoints fsync, then journal each range's durable end, so after a crash
/// every range resumes from its own. The SHA-256 follows the part of the file written from its
/// start. Memory: one gathered batch (about 1 MiB) per connection.
final class SegmentedDownload: Sendable {
    struct Settings: Sendable {
        var mode: ConnectionTuner.Mode
        /// The tightest bandwidth limit over the download, if any.
        var bytesPerSecond: Int64?
        /// A connection quiet this long gives up its remaining range to the next that asks.
        var stallAfter: Duration = .seconds(5)
        /// How often the tuner samples and checkpoints are considered.
        var tick: Duration = .milliseconds(25)
        var minimumSplit: Int64 = SegmentPlan.minimumSplit
        /// Failed connections in a row, without a byte between them, before the attempt fails.
        var failuresInARow = 4
        var maxPerHost = HostConnections.defaultCap
        var checkpointBytes: Int64 = 8 << 20
        var checkpointMaxInterval: Duration = .seconds(2)
    }

    /// The file changed on the server: the download starts over.
    struct FileChanged: Error {
        var reason: String
    }

    /// The first connection's response, already accepted, continuing at `from`.
    struct FirstResponse: Sendable {
        var body: HTTPClientResponse.Body
        var from: Int64
    }

    /// A connection writes about this much at a time: less than one stream's 1 MiB, as up to 16
    /// of them gather at once (memory is bounded by connections × this).
    static let writeBatchBytes = 256 << 10

    /// What a connection tells the coordinator when it ends.
    private enum Event: Sendable {
        case tick
        case ended(connection: Int, error: (any Error)?)
    }

    private struct State: Sendable {
        var plan: SegmentPlan
        var tuner: ConnectionTuner
        var sources: DownloadSources
        /// The source each connection fetches from.
        var sourceOf: [Int: Int] = [:]
        /// When each connection last received a byte (or started).
        var lastByte: [Int: ContinuousClock.Instant] = [:]
        /// Bytes each connection received, and the counts at the last look at their rates.
        var connectionBytes: [Int: Int64] = [:]
        var ratedBytes: [Int: Int64] = [:]
        /// Connections far slower than the others at the last look (``laggards(_:since:)``).
        var slow: Set<Int> = []
        /// Stuck connections stopped without a replacement: the target is this much lower.
        var shed = 0
        var nextConnection = 0
        var receivedBytes: Int64 = 0
        /// Connections told to stop after their current write (the tuner went back down):
        /// their ranges go to the others.
        var retired: Set<Int> = []
        /// How much a connection asks for at a time (``SegmentPlan/requestSize(rate:connections:unasked:alone:minimumSplit:)``).
        var requestSize: Int64 = .max
    }

    let id: Int64
    let validator: String
    let total: Int64
    let settings: Settings
    private let file: RangeFile
    private let state: Mutex<State>
    private let fetcher: HTTPFetcher
    private let extraHeaders: [(name: String, value: String)]
    private let headTimeout: Duration?
    private let options: TransferOptions
    private let hosts: HostConnections
    private let progress: ProgressBoard
    private let pace: (@Sendable (Int) async throws -> Void)?
    /// Told how far the file is written from its start (the hasher follows).
    private let written: @Sendable (Int64) -> Void
    /// Journals the durable ranges (after an fsync).
    private let journal: @Sendable ([(start: Int64, durable: Int64, end: Int64)]) async throws -> Void
    /// Records a source that is no longer used: its URL, why, and whether for good.
    private let dropped: @Sendable (URL, String, Bool) async -> Void
    private let logger: Logger

    init(
        id: Int64, sources: DownloadSources, validator: String, total: Int64, plan: SegmentPlan, settings: Settings, partURL: URL,
        fetcher: HTTPFetcher, extraHeaders: [(name: String, value: String)], headTimeout: Duration?, options: TransferOptions,
        hosts: HostConnections, progress: ProgressBoard, pace: (@Sendable (Int) async throws -> Void)?,
        written: @escaping @Sendable (Int64) -> Void,
        journal: @escaping @Sendable ([(start: Int64, durable: Int64, end: Int64)]) async throws -> Void,
        dropped: @escaping @Sendable (URL, String, Bool) async -> Void, logger: Logger
    ) throws(FerryError) {
        self.id = id
        self.validator = validator
        self.total = total
        self.settings = settings
        file = try RangeFile(url: partURL)
        state = Mutex(
            State(plan: plan, tuner: ConnectionTuner(mode: settings.mode, limit: settings.bytesPerSecond.map(Double.init)), sources: sources)
        )
        self.fetcher = fetcher
        self.extraHeaders = extraHeaders
        self.headTimeout = headTimeout
        self.options = options
        self.hosts = hosts
        self.progress = progress
        self.pace = pace
        self.written = written
        self.journal = journal
        self.dropped = dropped
        self.logger = logger
    }

    var plan: SegmentPlan { state.withLock { $0.plan } }

    // MARK: - Running

    /// Runs until every byte is written, the file changes, or connections keep failing.
    func run(first: FirstResponse?) async throws {
        var lastCheckpoint = ContinuousClock.now
        var checkpointed = plan.writtenBytes
        let started = ContinuousClock.now
        // The download's rate, smoothed over about half a second, sizes the requests.
        var rate = 0.0
        var sampled = (at: started, bytes: Int64(0))
        var rated = started
        // The transfer's own connection is counted by its worker; the others here.
        try await withThrowingTaskGroup(of: Event.self) { group in
            var alive: Set<Int> = []
            func spawn(source: Int, first: FirstResponse? = nil, counted isCounted: Bool = false) {
                let (connection, host) = state.withLock { state in
                    defer { state.nextConnection += 1 }
                    state.lastByte[state.nextConnection] = .now
                    state.connectionBytes[state.nextConnection] = 0
                    state.sourceOf[state.nextConnection] = source
                    return (state.nextConnection, state.sources.all[source].host)
                }
                alive.insert(connection)
                group.addTask {
                    // Connections beyond the transfer's own one count against the host's cap.
                    defer { if isCounted { self.hosts.leave(host) } }
                    do {
                        try await self.connection(connection, source: source, first: first)
                        return .ended(connection: connection, error: nil)
                    } catch {
                        return .ended(connection: connection, error: error)
                    }
                }
            }
            /// The live sources, fewest connections first (then in order).
            func sourcesByLoad() -> [Int] {
                state.withLock { state in
                    let load = Dictionary(grouping: alive, by: { state.sourceOf[$0] ?? 0 }).mapValues(\.count)
                    return state.sources.live.sorted { (load[$0] ?? 0, $0) < (load[$1] ?? 0, $1) }
                }
            }
            /// A source whose host takes one more connection, entered.
            func enterSource() -> Int? {
                let hosts = state.withLock { $0.sources.all.map(\.host) }
                return sourcesByLoad().first { self.hosts.tryEnter(hosts[$0], cap: settings.maxPerHost) }
            }
            spawn(source: 0, first: first)
            group.addTask {
                try await Task.sleep(for: self.settings.tick)
                return .tick
            }
            while let event = try await group.next() {
                switch event {
                case .tick:
                    if plan.isComplete { break }
                    progress.setSegments(id, connections: alive.count, ranges: liveRanges())
                    // More connections, as the tuner asks and the plan and the host allow.
                    let now = ContinuousClock.now
                    let target = state.withLock { state in
                        let elapsed = sampled.at.duration(to: now) / .seconds(1)
                        if elapsed > 0 {
                            let weight = min(1, elapsed / 0.5)
                            rate += weight * (Double(state.receivedBytes - sampled.bytes) / elapsed - rate)
                            sampled = (now, state.receivedBytes)
                        }
                        let target = max(1, state.tuner.sample(bytes: state.receivedBytes, at: started.duration(to: now), running: alive.count) - state.shed)
                        state.requestSize = SegmentPlan.requestSize(
                            rate: rate, connections: max(alive.count, target), unasked: state.plan.unasked,
                            alone: state.tuner.isDone && target == 1, minimumSplit: settings.minimumSplit)
                        return target
                    }
                    logger.trace(
                        "tick",
                        metadata: ["after": "\(started.duration(to: .now))", "target": "\(target)", "alive": "\(alive.count)"]
                    )
                    if alive.isEmpty, !plan.isComplete, let source = sourcesByLoad().first { spawn(source: source) }
                    if rated.duration(to: now) >= .milliseconds(500) {
                        rated = now
                        let replaced = state.withLock { state in
                            let slow = Self.laggards(state.connectionBytes, since: state.ratedBytes)
                            // Slow at two looks in a row, among many: a connection that joined a
                            // full link and lost a packet early crawls for seconds at a tiny
                            // window, and its range holds back the file's prefix (the hash waits
                            // for it). It stops, and its range goes to the next connection that
                            // asks. No new one takes its place: it would join the same full link.
                            let stuck = alive.count - state.retired.count >= Self.replacingAmong ? slow.intersection(state.slow) : []
                            state.retired.formUnion(stuck)
                            state.shed += stuck.count
                            state.slow = slow
                            state.ratedBytes = state.connectionBytes.filter { alive.contains($0.key) }
                            return stuck
                        }
                        if !replaced.isEmpty { logger.debug("stuck connections stopped", metadata: ["connections": "\(replaced.sorted())"]) }
                    }
                    // Fewer wanted: the newest connections stop, leaving their ranges to the rest.
                    if alive.count > target {
                        let excess = alive.sorted().suffix(alive.count - target)
                        state.withLock { $0.retired.formUnion(excess) }
                    }
                    // All the connections the tuner asks for at once (each takes its range when it
                    // starts, so the plan is asked again for each).
                    var added = 0
                    while alive.count < target, plan.hasWorkToShare, let source = enterSource() {
                        spawn(source: source, counted: true)
                        added += 1
                    }
                    if added > 0 {
                        logger.debug(
                            "more connections",
                            metadata: ["connections": "\(alive.count)", "target": "\(target)", "after": "\(started.duration(to: .now))",
                                       "bytes": "\(plan.writtenBytes)"]
                        )
                    }
                    let writtenBytes = plan.writtenBytes
                    if writtenBytes - checkpointed >= settings.checkpointBytes
                        || (writtenBytes > checkpointed && lastCheckpoint.duration(to: .now) >= settings.checkpointMaxInterval)
                    {
                        try await checkpoint()
                        checkpointed = writtenBytes
                        lastCheckpoint = .now
                    }
                    group.addTask {
                        try await Task.sleep(for: self.settings.tick)
                        return .tick
                    }
                case .ended(let connection, let error):
                    alive.remove(connection)
                    guard let error, !(error is CancellationError) else { break }
                    // The part file failed (a full disk): no other connection can do better.
                    if let failure = error as? FerryError, failure.code == .diskFull || failure.code == .fileSystem {
                        group.cancelAll()
                        throw failure
                    }
                    let source = state.withLock { $0.sourceOf[connection] ?? 0 }
                    let (verdict, server) = state.withLock { state in
                        (state.sources.failed(source, error: error, limit: settings.failuresInARow), state.sources.all[source].url)
                    }
                    logger.debug(
                        "a connection failed",
                        metadata: ["connection": "\(connection)", "source": "\(server)", "error": "\(error)", "verdict": "\(verdict)"]
                    )
                    switch verdict {
                    case .retry: break
                    case .restart(let reason):
                        group.cancelAll()
                        throw FileChanged(reason: reason)
                    case .fail:
                        group.cancelAll()
                        throw error
                    case .drop(let reason, let forGood):
                        await dropped(server, reason, forGood)
                        // Its other connections stop; their ranges go to the others.
                        state.withLock { state in
                            state.retired.formUnion(alive.filter { state.sourceOf[$0] == source })
                        }
                        if state.withLock({ $0.sources.live.isEmpty }) {
                            group.cancelAll()
                            throw error
                        }
                    }
                    if alive.isEmpty, !plan.isComplete, let next = sourcesByLoad().first {
                        // Every connection is gone: one more, after a pause that grows with the failures.
                        try await Task.sleep(for: .milliseconds(100 * max(1, state.withLock { $0.sources.failures(next) })))
                        spawn(source: next)
                    }
                }
                if plan.isComplete {
                    group.cancelAll()
                    break
                }
            }
        }
        guard plan.isComplete else { throw CancellationError() }
    }

    /// The ranges with the bytes of each in the file, for progress.
    private func liveRanges() -> [TransferRange] {
        Self.shown(state.withLock { state in
            state.plan.ordered.map { TransferRange(start: $0.segment.start, end: $0.segment.end, bytes: $0.segment.written - $0.segment.start) }
        })
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

    /// fsync, then journal the ranges as durable up to what was written before it.
    func checkpoint() async throws {
        let offsets = state.withLock { $0.plan.writtenOffsets }
        try await BlockingIO.run { () throws(FerryError) in try self.file.sync() }
        let ranges = state.withLock { state in
            state.plan.madeDurable(offsets)
            return state.plan.durableRanges
        }
        try await journal(ranges)
    }

    // MARK: - One connection

    private func connection(_ connection: Int, source: Int, first: FirstResponse?) async throws {
        let url = state.withLock { $0.sources.all[source].url }
        var pending = first
        while true {
            try Task.checkCancellation()
            if state.withLock({ $0.retired.contains(connection) }) { return }
            let stalled = stalledConnections()
            // The first response runs to the end of what it was asked for (the whole file, or
            // until another connection takes the upper part).
            guard let assignment = state.withLock({ state in
                state.plan.take(for: connection, size: pending == nil ? state.requestSize : .max, stalled: stalled)
            }) else { return }
            do {
                let body: HTTPClientResponse.Body
                if let first = pending, first.from == assignment.from {
                    body = first.body
                    pending = nil
                } else {
                    body = try await request(assignment, from: url)
                }
                try await stream(body, assignment, connection, source: source)
                state.withLock { $0.plan.release(assignment.segment) }
            } catch {
                state.withLock { $0.plan.release(assignment.segment) }
                throw error
            }
        }
    }

    private func stalledConnections() -> Set<Int> {
        let now = ContinuousClock.now
        return state.withLock { state in
            Set(state.lastByte.filter { $0.value.duration(to: now) >= settings.stallAfter }.keys).union(state.slow)
        }
    }

    /// A connection slow at two looks in a row is stopped only among this many: with fewer, the
    /// others may not fill the link without it.
    static let replacingAmong = 8

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

    /// `Range` with `If-Range`: a 206 of exactly that range with the same validator, or the file
    /// changed.
    private func request(_ assignment: SegmentPlan.Assignment, from url: URL) async throws -> HTTPClientResponse.Body {
        let (response, _) = try await fetcher.get(
            url, headers: [("Range", "bytes=\(assignment.from)-\(assignment.to - 1)"), ("If-Range", validator)],
            extra: extraHeaders, headTimeout: headTimeout, options: options
        )
        let status = Int(response.status.code)
        let headers = response.headers
        let theirs = Validator.from(etag: headers.first(name: "ETag"), lastModified: headers.first(name: "Last-Modified"))
        switch status {
        case 206:
            guard let range = headers.first(name: "Content-Range").flatMap({ ContentRange($0) }), range.range?.lowerBound == assignment.from,
                range.total == nil || range.total == total
            else {
                throw FileChanged(reason: "a range came back as \(headers.first(name: "Content-Range") ?? "no Content-Range")")
            }
            if let theirs, theirs != validator {
                throw FileChanged(reason: "the validator changed from \(validator) to \(theirs)")
            }
            return response.body
        case 200:
            throw FileChanged(reason: "a range request was answered with the whole file (200)")
        default:
            throw HTTPStatusFailure(status: status, reason: response.status.reasonPhrase, url: url, retryAfter: headers.first(name: "Retry-After"))
        }
    }

    /// Streams a body into its range, about 1 MiB per write, until the range ends (it may shrink
    /// while it runs: another connection took its upper part).
    private func stream(_ body: HTTPClientResponse.Body, _ assignment: SegmentPlan.Assignment, _ connection: Int, source: Int) async throws {
        var batch: [ByteBuffer] = []
        var batchBytes = 0
        var offset = assignment.from
        // A slow connection writes at least this often, so checkpoints find its bytes.
        let flushInterval = min(settings.checkpointMaxInterval / 2, .milliseconds(250))
        var lastFlush = ContinuousClock.now
        func flush() throws {
            guard !batch.isEmpty else { return }
            offset = try file.write(batch, at: offset)
            batch = []
            batchBytes = 0
            lastFlush = .now
            let prefix = state.withLock { state in
                state.plan.wrote(assignment.segment, through: offset)
                return state.plan.writtenPrefix
            }
            written(prefix)
        }
        do {
            for try await buffer in body {
                let count = Int64(buffer.readableBytes)
                // One lock per read: the bytes that are this range's, and whether it was cut short
                // (another connection took its upper part, or this one retired). A range that
                // reaches the end it asked for reads on to the response's end, so its connection
                // can serve the next request.
                let (taken, done) = state.withLock { state -> (Int64, Bool) in
                    guard !state.retired.contains(connection) else { return (0, true) }
                    let taken = state.plan.accept(count, for: assignment.segment)
                    state.receivedBytes += taken
                    state.sources.received(taken, from: source)
                    state.connectionBytes[connection, default: 0] += taken
                    state.lastByte[connection] = .now
                    let cut = state.plan.segments[assignment.segment].map { $0.received >= $0.end && $0.end < assignment.to } ?? true
                    return (taken, cut)
                }
                if taken > 0 {
                    batch.append(buffer.getSlice(at: buffer.readerIndex, length: Int(taken))!)
                    batchBytes += Int(taken)
                    try await progress.count(id, bytes: Int(taken), pace: pace)
                }
                if batchBytes >= Self.writeBatchBytes || batch.count >= DownloadSink.writeBatchCount || done
                    || lastFlush.duration(to: .now) >= flushInterval
                {
                    try flush()
                }
                if done { return }
            }
            try flush()
        } catch {
            try? flush()
            throw error
        }
        let short = state.withLock { state in
            !state.retired.contains(connection) && (state.plan.segments[assignment.segment].map { $0.written < $0.end } ?? false)
        }
        if short {
            throw FerryError(.lengthMismatch, "A range ended early: bytes \(assignment.from)-\(assignment.to - 1) stopped at \(offset).")
        }
    }
}
