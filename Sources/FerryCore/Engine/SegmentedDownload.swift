import AsyncHTTPClient
import FerryModel
import Foundation
import Logging
import NIOCore
import Synchronization

/// The I/O of a ``SegmentedAttempt``: its connections, each fetching ranges of the file into the
/// same part file (``RangeFile``), a tick that asks the machine what to do next, and the
/// checkpoints it calls for. Every range request carries `If-Range` with the download's
/// validator: a `200`, or another validator, means the file changed (``FileChanged``). Checkpoints
/// fsync, then journal each range's durable end, so after a crash every range resumes from its
/// own. The SHA-256 follows the part of the file written from its start. Memory: one gathered
/// batch (about 256 KiB) per connection.
final class SegmentedDownload: Sendable {
    /// The first connection's response, already accepted, continuing at `from`.
    struct FirstResponse: Sendable {
        var body: HTTPClientResponse.Body
        var from: Int64
    }

    /// A connection writes about this much at a time: less than one stream's 1 MiB, as up to 16
    /// of them gather at once (memory is bounded by connections × this).
    static let writeBatchBytes = 256 << 10
    /// How often the machine looks at the download.
    static let tick = Duration.milliseconds(25)

    private enum Event: Sendable {
        case tick
        case ended(connection: Int, error: (any Error)?)
    }

    let id: Int64
    let validator: String
    /// The file's length, which every range's answer must state.
    let total: Int64
    private let machine: Mutex<SegmentedAttempt>
    private let file: RangeFile
    private let sink: DownloadSink
    private let worker: TransferWorker
    private let settings: TransferSettings
    private let pace: (@Sendable (Int) async throws -> Void)?
    /// Ranges over HTTP/1.1 connections of their own (a large file: ``TransferWorker/prefersHTTP1(_:)``).
    private let http1: Bool
    /// Answers 401s, and sends what the first request learnt at once on every range.
    private let auth: Authenticator?
    private let started = ContinuousClock.now

    init(
        id: Int64, attempt: SegmentedAttempt, validator: String, sink: DownloadSink, worker: TransferWorker, settings: TransferSettings,
        pace: (@Sendable (Int) async throws -> Void)?, http1: Bool = false, auth: Authenticator? = nil
    ) throws(FerryError) {
        self.auth = auth
        self.id = id
        self.validator = validator
        total = attempt.plan.total
        machine = Mutex(attempt)
        file = try RangeFile(url: sink.url)
        self.sink = sink
        self.worker = worker
        self.settings = settings
        self.pace = pace
        self.http1 = http1
    }

    /// The attempt's clock.
    private var now: Duration { started.duration(to: .now) }

    // MARK: - Running

    /// Runs until every byte is written (then returns), the file changes (``FileChanged``), or
    /// the machine gives up (its error).
    func run(first: FirstResponse?) async throws {
        let maxPerHost = settings.merged.maxConnectionsPerHost ?? HostConnections.defaultCap
        try await withThrowingTaskGroup(of: Event.self) { group in
            /// Runs what the machine decided; true when the download is over.
            func execute(_ actions: [SegmentedAttempt.Action]) async throws -> Bool {
                for action in actions {
                    switch action {
                    case .open(let connection, let source, let counted, let delay):
                        let host = machine.withLock { $0.sources.all[source].host }
                        let first = connection == 0 ? first : nil
                        group.addTask {
                            // Connections beyond the transfer's own one count against the host's cap.
                            defer { if counted { self.worker.hosts.leave(host) } }
                            do {
                                if delay > .zero { try await Task.sleep(for: delay) }
                                try await self.connection(connection, source: source, first: first)
                                return .ended(connection: connection, error: nil)
                            } catch {
                                return .ended(connection: connection, error: error)
                            }
                        }
                    case .checkpoint:
                        try await checkpoint()
                    case .dropSource(let url, let reason, let forGood):
                        await worker.dropSource(id, url, reason: reason, forGood: forGood)
                    case .restart(let reason):
                        group.cancelAll()
                        throw FileChanged(reason: reason)
                    case .fail(let failure):
                        group.cancelAll()
                        throw failure.error
                    case .finish:
                        group.cancelAll()
                        return true
                    }
                }
                return false
            }
            func scheduleTick() {
                group.addTask {
                    try await Task.sleep(for: Self.tick)
                    return .tick
                }
            }
            _ = try await execute(machine.withLock { $0.begin() })
            scheduleTick()
            while let event = try await group.next() {
                let actions: [SegmentedAttempt.Action]
                switch event {
                case .tick:
                    let (connections, ranges) = machine.withLock { ($0.alive.count, $0.shownRanges) }
                    worker.progress.setSegments(id, connections: connections, ranges: ranges)
                    let (hosts, at) = (worker.hosts, now)
                    actions = machine.withLock { $0.tick(at: at) { hosts.tryEnter($0, cap: maxPerHost) } }
                    if actions.contains(where: { if case .open(_, _, true, _) = $0 { true } else { false } }) {
                        worker.logger.debug(
                            "more connections", metadata: ["connections": "\(machine.withLock { $0.alive.count })", "after": "\(now)"]
                        )
                    }
                case .ended(let connection, let error):
                    if let error { worker.logger.debug("a connection ended", metadata: ["connection": "\(connection)", "error": "\(error)"]) }
                    let at = now
                    actions = machine.withLock { $0.ended(connection, error: error, at: at) }
                }
                if try await execute(actions) { return }
                if case .tick = event { scheduleTick() }
            }
            throw CancellationError()
        }
    }

    /// fsync, then journal the ranges as durable up to what was written before it.
    func checkpoint() async throws {
        let offsets = machine.withLock { $0.plan.writtenOffsets }
        try await BlockingIO.run { () throws(FerryError) in try self.file.sync() }
        let ranges = machine.withLock { $0.madeDurable(offsets) }
        let durable = ranges.reduce(0) { $0 + ($1.durable - $1.start) }
        try await worker.store.record(.rangesCheckpointed(ranges: SegmentPlan.journalText(ranges), durable: durable), of: id)
    }

    // MARK: - One connection

    private func connection(_ connection: Int, source: Int, first: FirstResponse?) async throws {
        let url = machine.withLock { $0.sources.all[source].url }
        var pending = first
        while true {
            try Task.checkCancellation()
            let (isFirst, at) = (pending != nil, now)
            guard let assignment = machine.withLock({ $0.take(for: connection, first: isFirst, at: at) }) else { return }
            do {
                let body: HTTPClientResponse.Body
                if let first = pending, first.from == assignment.from {
                    body = first.body
                    pending = nil
                } else {
                    body = try await request(assignment, from: url)
                }
                try await stream(body, assignment, connection)
                machine.withLock { $0.release(assignment.segment) }
            } catch {
                machine.withLock { $0.release(assignment.segment) }
                throw error
            }
        }
    }

    /// `Range` with `If-Range`: a 206 of exactly that range with the same validator, or the file
    /// changed.
    private func request(_ assignment: SegmentPlan.Assignment, from url: URL) async throws -> HTTPClientResponse.Body {
        let (response, _) = try await worker.fetcher.get(
            url, headers: [("Range", "bytes=\(assignment.from)-\(assignment.to - 1)"), ("If-Range", validator)],
            extra: settings.headers, headTimeout: settings.headTimeout, options: settings.merged,
            session: settings.sessionName, http1: http1, auth: auth
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

    /// Streams a body into its range, in batches of about 256 KiB, until the range ends (it may
    /// shrink while it runs: another connection took its upper part).
    private func stream(_ body: HTTPClientResponse.Body, _ assignment: SegmentPlan.Assignment, _ connection: Int) async throws {
        var batch: [ByteBuffer] = []
        var batchBytes = 0
        var offset = assignment.from
        // A slow connection writes at least this often, so checkpoints find its bytes.
        let flushInterval = min(worker.configuration.checkpointMaxInterval / 2, .milliseconds(250))
        var lastFlush = ContinuousClock.now
        func flush() throws {
            guard !batch.isEmpty else { return }
            offset = try file.write(batch, at: offset)
            batch = []
            batchBytes = 0
            lastFlush = .now
            sink.hash(through: machine.withLock { $0.wrote(assignment.segment, through: offset) })
        }
        do {
            for try await buffer in body {
                // One lock per read, the clock read outside it.
                let (count, at) = (Int64(buffer.readableBytes), now)
                let (taken, cut) = machine.withLock { $0.received(count, on: connection, for: assignment, at: at) }
                if taken > 0 {
                    batch.append(buffer.getSlice(at: buffer.readerIndex, length: Int(taken))!)
                    batchBytes += Int(taken)
                    try await worker.progress.count(id, bytes: Int(taken), pace: pace)
                }
                if batchBytes >= Self.writeBatchBytes || batch.count >= DownloadSink.writeBatchCount || cut
                    || lastFlush.duration(to: .now) >= flushInterval
                {
                    try flush()
                }
                if cut { return }
            }
            try flush()
        } catch {
            try? flush()
            throw error
        }
        if machine.withLock({ $0.endedShort(connection, segment: assignment.segment) }) {
            throw FerryError(.lengthMismatch, "A range ended early: bytes \(assignment.from)-\(assignment.to - 1) stopped at \(offset).")
        }
    }
}
