import AsyncHTTPClient
import FerryKit
import Foundation
import Logging
import NIOCore
import Synchronization

/// One attempt of a download over several connections, each fetching a range of the file into
/// the same part file (``RangeFile``), as the ``SegmentPlan`` shares them out and the
/// ``ConnectionTuner`` sizes them. Every range request carries `If-Range` with the download's
/// validator: a `200`, or another validator, means the file changed (``FileChanged``), and every
/// connection stops. Checkpoints fsync, then journal each range's durable end, so after a crash
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
        var tick: Duration = .milliseconds(50)
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
        /// When each connection last received a byte (or started).
        var lastByte: [Int: ContinuousClock.Instant] = [:]
        var nextConnection = 0
        var receivedBytes: Int64 = 0
        /// Connections told to stop after their current write (the tuner went back down):
        /// their ranges go to the others.
        var retired: Set<Int> = []
    }

    let id: Int64
    let url: URL
    let validator: String
    let total: Int64
    let host: String
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
    private let logger: Logger

    init(
        id: Int64, url: URL, validator: String, total: Int64, plan: SegmentPlan, settings: Settings, partURL: URL,
        fetcher: HTTPFetcher, extraHeaders: [(name: String, value: String)], headTimeout: Duration?, options: TransferOptions,
        hosts: HostConnections, progress: ProgressBoard, pace: (@Sendable (Int) async throws -> Void)?,
        written: @escaping @Sendable (Int64) -> Void,
        journal: @escaping @Sendable ([(start: Int64, durable: Int64, end: Int64)]) async throws -> Void, logger: Logger
    ) throws(FerryError) {
        self.id = id
        self.url = url
        self.validator = validator
        self.total = total
        host = url.host?.lowercased() ?? ""
        self.settings = settings
        file = try RangeFile(url: partURL)
        state = Mutex(State(plan: plan, tuner: ConnectionTuner(mode: settings.mode, limit: settings.bytesPerSecond.map(Double.init))))
        self.fetcher = fetcher
        self.extraHeaders = extraHeaders
        self.headTimeout = headTimeout
        self.options = options
        self.hosts = hosts
        self.progress = progress
        self.pace = pace
        self.written = written
        self.journal = journal
        self.logger = logger
    }

    var plan: SegmentPlan { state.withLock { $0.plan } }

    // MARK: - Running

    /// Runs until every byte is written, the file changes, or connections keep failing.
    func run(first: FirstResponse?) async throws {
        var lastCheckpoint = ContinuousClock.now
        var checkpointed = plan.writtenBytes
        let started = ContinuousClock.now
        // The transfer's own connection is counted by its worker; the others here.
        try await withThrowingTaskGroup(of: Event.self) { group in
            var alive: Set<Int> = []
            var failures = 0
            var failedAt: Int64 = -1
            var lastError: (any Error)?
            func spawn(first: FirstResponse? = nil, counted isCounted: Bool = false) {
                let connection = state.withLock { state in
                    defer { state.nextConnection += 1 }
                    state.lastByte[state.nextConnection] = .now
                    return state.nextConnection
                }
                alive.insert(connection)
                group.addTask {
                    // Connections beyond the transfer's own one count against the host's cap.
                    defer { if isCounted { self.hosts.leave(self.host) } }
                    do {
                        try await self.connection(connection, first: first)
                        return .ended(connection: connection, error: nil)
                    } catch {
                        return .ended(connection: connection, error: error)
                    }
                }
            }
            spawn(first: first)
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
                    let target = state.withLock { state in
                        state.tuner.sample(bytes: state.receivedBytes, at: started.duration(to: .now), running: alive.count)
                    }
                    logger.trace(
                        "tick",
                        metadata: ["after": "\(started.duration(to: .now))", "target": "\(target)", "alive": "\(alive.count)"]
                    )
                    if alive.isEmpty, !plan.isComplete { spawn() }
                    // Fewer wanted: the newest connections stop, leaving their ranges to the rest.
                    if alive.count > target {
                        let excess = alive.sorted().suffix(alive.count - target)
                        state.withLock { $0.retired.formUnion(excess) }
                    }
                    // All the connections the tuner asks for at once (each takes its range when it
                    // starts, so the plan is asked again for each).
                    var added = 0
                    while alive.count < target, plan.hasWorkToShare, hosts.tryEnter(host, cap: settings.maxPerHost) {
                        spawn(counted: true)
                        added += 1
                    }
                    if added > 0 {
                        logger.debug(
                            "more connections",
                            metadata: ["connections": "\(alive.count)", "target": "\(target)", "after": "\(started.duration(to: .now))",
                                       "bytes": "\(plan.writtenBytes)"]
                        )
                    }
                    let now = plan.writtenBytes
                    if now - checkpointed >= settings.checkpointBytes
                        || (now > checkpointed && lastCheckpoint.duration(to: .now) >= settings.checkpointMaxInterval)
                    {
                        try await checkpoint()
                        checkpointed = now
                        lastCheckpoint = .now
                    }
                    group.addTask {
                        try await Task.sleep(for: self.settings.tick)
                        return .tick
                    }
                case .ended(let connection, let error):
                    alive.remove(connection)
                    if let changed = error as? FileChanged {
                        group.cancelAll()
                        throw changed
                    }
                    // The part file failed (a full disk): no other connection can do better.
                    if let failure = error as? FerryError, failure.code == .diskFull || failure.code == .fileSystem {
                        group.cancelAll()
                        throw failure
                    }
                    if let error, !(error is CancellationError) {
                        // Failures in a row: with no byte written between them.
                        let now = plan.writtenBytes
                        failures = now == failedAt ? failures + 1 : 1
                        failedAt = now
                        lastError = error
                        logger.debug("a connection failed", metadata: ["connection": "\(connection)", "error": "\(error)"])
                        if failures >= settings.failuresInARow {
                            group.cancelAll()
                            throw error
                        }
                    }
                }
                if plan.isComplete {
                    group.cancelAll()
                    break
                }
                if alive.isEmpty, lastError != nil, failures > 0 {
                    // Every connection is gone: one more, after a pause that grows with the failures.
                    try await Task.sleep(for: .milliseconds(100 * failures))
                    spawn()
                }
            }
        }
        guard plan.isComplete else { throw CancellationError() }
    }

    /// The ranges with the bytes of each in the file, for progress.
    private func liveRanges() -> [TransferRange] {
        state.withLock { state in
            state.plan.ordered.map { TransferRange(start: $0.segment.start, end: $0.segment.end, bytes: $0.segment.written - $0.segment.start) }
        }
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

    private func connection(_ connection: Int, first: FirstResponse?) async throws {
        var pending = first
        while true {
            try Task.checkCancellation()
            if state.withLock({ $0.retired.contains(connection) }) { return }
            let stalled = stalledConnections()
            guard let assignment = state.withLock({ $0.plan.take(for: connection, stalled: stalled) }) else { return }
            do {
                let body: HTTPClientResponse.Body
                if let first = pending, first.from == assignment.from {
                    body = first.body
                    pending = nil
                } else {
                    body = try await request(assignment)
                }
                try await stream(body, assignment, connection)
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
            Set(state.lastByte.filter { $0.value.duration(to: now) >= settings.stallAfter }.keys)
        }
    }

    /// `Range` with `If-Range`: a 206 of exactly that range with the same validator, or the file
    /// changed.
    private func request(_ assignment: SegmentPlan.Assignment) async throws -> HTTPClientResponse.Body {
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
    private func stream(_ body: HTTPClientResponse.Body, _ assignment: SegmentPlan.Assignment, _ connection: Int) async throws {
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
                // One lock per read: the bytes that are this range's, and whether it has ended
                // (reached its end, which another connection may have moved, or retired).
                let (taken, done) = state.withLock { state -> (Int64, Bool) in
                    guard !state.retired.contains(connection) else { return (0, true) }
                    let taken = state.plan.accept(count, for: assignment.segment)
                    state.receivedBytes += taken
                    state.lastByte[connection] = .now
                    return (taken, state.plan.segments[assignment.segment].map { $0.received >= $0.end } ?? true)
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
