import AsyncHTTPClient
import FerryModel
import Foundation
import Logging
import NIOCore
import Synchronization

/// One run of one transfer: open its part file, run one attempt (a ``DownloadAttempt``, whose
/// actions ``download(_:into:settings:pace:segmented:)`` executes; an ``UploadAttempt`` for an
/// upload), then move the file into the library, or checkpoint on a stop, or report why it
/// failed. Every run applies the transfer's settings (headers, timeouts, bandwidth, retry
/// limit). Retries are the control's business: the worker only reports what happened.
struct TransferWorker: Sendable {
    typealias Report = TransferControl.WorkerReport

    let store: TransferStore
    let library: LibraryFolder
    let fetcher: HTTPFetcher
    let progress: ProgressBoard
    let bandwidth: Bandwidth
    let network: NetworkChanges
    let hosts: HostConnections
    let configuration: TransferEngine.Configuration
    let random: @Sendable () -> Double
    let logger: Logger

    /// Runs one attempt of a transfer whose start is journaled, and says how it ended.
    /// - Parameter mayFinish: asks the control whether the file may go into the library now (no
    ///   pause or cancel came first); after a yes, only this report may change the transfer.
    func run(record: TransferRecord, signal: StopSignal, mayFinish: @escaping @Sendable () async -> Bool) async -> Report {
        let id = record.transferId
        var logger = logger
        logger[metadataKey: "transfer.id"] = "\(id)"
        let settings: TransferSettings
        do {
            settings = try await store.journal.settings(for: record)
        } catch {
            return failed(url: record.url, error: error, progressed: false, policy: configuration.retry, logger: logger)
        }
        // Each kind of transfer runs its own attempt here (a torrent or an FTP file would be another).
        if record.kind == .upload { return await upload(record, settings, signal: signal, logger: logger) }

        let sink: DownloadSink
        do {
            if record.directory == nil { try FileManager.default.createDirectory(at: library.partials, withIntermediateDirectories: true) }
            // A segmented download's ranges lie anywhere in the file: nothing is cut.
            sink = try DownloadSink(url: library.partURL(for: record), durableBytes: record.segments == nil ? record.durableBytes : .max)
        } catch {
            return failed(
                url: record.url, error: error, progressed: false, policy: settings.retryPolicy(configuration.retry), options: settings.merged,
                logger: logger
            )
        }
        defer {
            sink.close()
            progress.end(id)
            bandwidth.release(id)
        }
        progress.begin(id, session: record.session, bytes: record.segments == nil ? sink.length : record.durableBytes, total: record.totalBytes)
        let pace = bandwidth.pace(for: id, session: record.session, settings)
        let progress = progress
        let startBytes = progress.snapshot(id)?.bytes ?? 0
        let segmented = SegmentedBox()
        let host = URL(string: record.url)?.host?.lowercased() ?? ""
        hosts.enter(host)
        defer { hosts.leave(host) }
        /// What a stop or failure must make durable: the ranges, or the one stream's bytes.
        func checkpointOnExit() async {
            if let download = segmented.current {
                do { try await download.checkpoint() } catch { logger.warning("checkpoint failed", metadata: ["error": "\(error)"]) }
            } else if sink.isTouched {
                await checkpoint(id, sink, logger: logger)
            }
        }

        do {
            // On the event loop that will read the connection: see EventLoopExecutor.
            let downloaded: Void? = try await withTaskExecutorPreference(fetcher.executor()) {
                try await signal.race {
                    try await IdleWatchdog.run(limit: settings.idleTimeout, network: network, bytes: { progress.snapshot(id)?.bytes ?? 0 }) {
                        try await download(record, into: sink, settings: settings, pace: pace, segmented: segmented)
                    }
                }
            }
            guard downloaded != nil else {
                await checkpointOnExit()
                return .stopped
            }
            let finishing = ContinuousClock.now
            let done = try await complete(record, sink, mayFinish: mayFinish)
            logger.info("completed", metadata: ["transfer.bytes": "\(sink.length)", "transfer.finish": "\(finishing.duration(to: .now))"])
            return done
        } catch {
            // An attempt that wrote nothing (a refused connection, no network) has nothing to
            // make durable: no fsync, no journal write, which is most of a waiting transfer's cost.
            await checkpointOnExit()
            if signal.isFired || error is FinishRefused { return .stopped }
            let moved = (progress.snapshot(id)?.bytes ?? 0) > startBytes
            var error = error
            // A certificate refused: whose, and why, in words (a second look at it).
            if CertificateProbe.isCertificateFailure(error), let url = URL(string: record.url),
                let refusal = await CertificateProbe.explain(url, base: (try? fetcher.clients.tlsConfiguration(for: settings.merged)) ?? fetcher.clients.baseTLS)
            {
                error = refusal
            }
            return failed(
                url: record.url, error: error, progressed: moved, policy: settings.retryPolicy(configuration.retry),
                options: settings.merged, logger: logger
            )
        }
    }

    /// A pause or cancel came before the move into the library.
    struct FinishRefused: Error {}

    // MARK: - Download

    /// Executes a ``DownloadAttempt``: each action it returns is done here, and what the action
    /// found (a response's head, the end of the ranges or of the stream) goes back to it.
    func download(
        _ record: TransferRecord, into sink: DownloadSink, settings: TransferSettings, pace: (@Sendable (Int) async throws -> Void)?,
        segmented: SegmentedBox
    ) async throws {
        let id = record.transferId
        let url = URL(string: record.url)!
        // Mirrors still in use; one that fails in this attempt is left out of the rest of it.
        var mirrors = record.mirrorList.filter { $0.dropped == nil }.compactMap { URL(string: $0.url) }
        var attempt = DownloadAttempt(mode: connectionMode(settings.merged), minimumSplit: configuration.segmentMinimumSplit)
        var actions = attempt.handle(
            .start(.init(durableBytes: sink.length, total: record.totalBytes, validator: record.validator, ranges: record.segments))
        )
        // The response being read: its URL after redirects, and the source it came from.
        var response: (head: HTTPClientResponse, url: URL, source: URL)?
        // A large file's bytes come over HTTP/1.1 (``prefersHTTP1(_:)``).
        var http1 = false
        while !actions.isEmpty {
            switch actions.removeFirst() {
            case .restart(let reason):
                try await restart(id, sink, reason: reason)
            case .resumeRanges(let durable):
                try await store.record(.rangesResumed(offset: durable), of: id)
            case .request(let plan):
                var opened: (HTTPClientResponse, URL, URL)? = try await open(url, mirrors: &mirrors, plan: plan, record: record, settings: settings, http1: http1)
                if !http1, Self.prefersHTTP1(opened!.0) {
                    // Asked again over HTTP/1.1; the HTTP/2 stream is reset once its body is let go.
                    http1 = true
                    opened = nil
                    opened = try await open(url, mirrors: &mirrors, plan: plan, record: record, settings: settings, http1: true)
                }
                let answer = opened!
                response = answer
                let headers = answer.0.headers
                let head = DownloadAttempt.Head(
                    response: ResumePlan.Response(
                        status: Int(answer.0.status.code), contentRange: headers.first(name: "Content-Range"),
                        contentLength: headers.first(name: "Content-Length").flatMap { Int64($0) },
                        validator: Validator.from(etag: headers.first(name: "ETag"), lastModified: headers.first(name: "Last-Modified"))
                    ),
                    acceptsRanges: Self.acceptsRanges(headers.first(name: "Accept-Ranges"))
                )
                actions += attempt.handle(.head(head))
            case .accept(let from, let total, let validator, let restartReason):
                guard let response else { throw FerryError(.internalError, "A response was accepted before any came.") }
                let offered = Self.offeredMirrors(response.head.headers["Link"], answer: response.url, record: record, options: settings.merged)
                try await accept(
                    response, record: record, from: from, total: total, validator: validator, restartReason: restartReason, offered: offered, sink: sink
                )
                mirrors += offered.filter { !mirrors.contains($0) }
            case .fetchRanges(let plan, let validator, let mode, let first):
                // Continuing a response: its server is the reference; else the URL is.
                var sources = DownloadSources(reference: url, mirrors: mirrors, own: url)
                var body: SegmentedDownload.FirstResponse?
                if first, let response {
                    sources = DownloadSources(reference: response.url, mirrors: mirrors.filter { $0 != response.source }, own: url)
                    body = SegmentedDownload.FirstResponse(body: response.head.body, from: plan.writtenBytes)
                }
                do {
                    try await fetchRanges(
                        record, plan: plan, mode: mode, sources: sources, validator: validator, first: body, sink: sink, settings: settings,
                        pace: pace, into: segmented, http1: http1
                    )
                    actions += attempt.handle(.rangesEnded(changed: nil))
                } catch let changed as FileChanged {
                    segmented.current = nil
                    actions += attempt.handle(.rangesEnded(changed: changed.reason))
                }
            case .stream(let total):
                guard let response else { throw FerryError(.internalError, "A stream was asked for before any response came.") }
                try await stream(response.head.body, into: sink, id: id, total: total, pace: pace)
                actions += attempt.handle(.streamEnded(length: sink.length))
            case .finish(let total):
                if let total { progress.set(id, bytes: sink.length, total: total) }
                return
            case .fail(let error):
                throw error
            }
        }
    }

    /// Journals an accepted response: where it continues, the name its headers suggest, the
    /// digest the server states.
    private func accept(
        _ response: (head: HTTPClientResponse, url: URL, source: URL), record: TransferRecord, from: Int64, total: Int64?,
        validator: String?, restartReason: String?, offered: [URL], sink: DownloadSink
    ) async throws {
        if from == 0, sink.length > 0 { try sink.restart() }
        sink.hashExisting()
        let headers = response.head.headers
        let contentType = headers.first(name: "Content-Type")
        let nameHint = record.preferredName.map {
            FileNamer.name(preferred: $0, contentType: contentType, url: response.url)
        } ?? FileNamer.name(
            contentDisposition: headers.first(name: "Content-Disposition"), url: response.url,
            suggested: record.suggestedName, contentType: contentType
        )
        // The server's digest of the whole file, checked at the end (a resumed download keeps
        // the one its first response gave, unless this one states another).
        let stated = DigestHeaders.checksum(
            reprDigest: headers.first(name: "Repr-Digest"), contentDigest: headers.first(name: "Content-Digest"),
            digest: headers.first(name: "Digest"), status: Int(response.head.status.code),
            contentEncoding: headers.first(name: "Content-Encoding")
        )
        let accepted = TransferFact.Accepted(
            from: from, total: total, validator: validator, nameHint: nameHint,
            serverDigest: stated.map { "\($0.header) \($0.checksum)" }, restartReason: restartReason,
            httpVersion: response.head.version.major >= 2 ? "HTTP/\(response.head.version.major)" : "HTTP/\(response.head.version.major).\(response.head.version.minor)",
            offeredMirrors: offered.map(\.absoluteString)
        )
        try await store.record(.accepted(accepted), of: record.transferId)
        progress.set(record.transferId, bytes: from, total: total)
    }

    /// The mirrors a server offers with its answer (RFC 6249's `Link: <…>; rel=duplicate`) that
    /// the transfer does not know yet. None for a transfer that sends credentials or secret
    /// headers (a server must not send them elsewhere), and only https ones for an https URL.
    static func offeredMirrors(_ links: [String], answer: URL, record: TransferRecord, options: TransferOptions) -> [URL] {
        guard !links.isEmpty, options.user == nil, options.password == nil,
            !(options.headers ?? [:]).keys.contains(where: TransferOptions.isSensitive(header:))
        else { return [] }
        let secure = URL(string: record.url)?.scheme?.lowercased() == "https"
        var known = Set(record.mirrorList.map(\.url) + [record.url, answer.absoluteString])
        let room = max(0, LinkDuplicates.maximum - record.mirrorList.count)
        return LinkDuplicates.parse(links, base: answer).map(\.url)
            .filter { !secure || $0.scheme?.lowercased() == "https" }
            .filter { known.insert($0.absoluteString).inserted }
            .prefix(room).map { $0 }
    }

    /// Whether a download answered over HTTP/2 should be asked again over HTTP/1.1: a large file
    /// (16 MiB or more) from a server that takes ranges. HTTP/2's framing took twice the CPU a
    /// byte here (512 MiB from nginx over TLS on loopback: 3.8–4.0 s over HTTP/2, 1.8 s over
    /// HTTP/1.1, curl 2.35 s; docs/PERFORMANCE.md), and ranges over connections of their own
    /// decrypt on several cores. Small files stay streams of the shared connection.
    static func prefersHTTP1(_ response: HTTPClientResponse) -> Bool {
        guard response.version.major >= 2, acceptsRanges(response.headers.first(name: "Accept-Ranges")) else { return false }
        let length = response.headers.first(name: "Content-Length").flatMap { Int64($0) } ?? 0
        return length >= 16 << 20
    }

    /// `Accept-Ranges: bytes`.
    static func acceptsRanges(_ header: String?) -> Bool {
        header?.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "bytes" } ?? false
    }

    /// How many connections a download may use: nil for one.
    func connectionMode(_ options: TransferOptions) -> ConnectionTuner.Mode? {
        let cap = options.maxConnectionsPerHost ?? HostConnections.defaultCap
        switch options.connections {
        case 1?: return nil
        case let count?: return .fixed(count)
        case nil: return cap > 1 ? .adaptive(maximum: cap) : nil
        }
    }

    /// Runs the rest of the download over several connections (``SegmentedDownload``), then
    /// brings the sink up to date with the file for the finish.
    /// - Parameter first: the accepted response the ranges continue, if any.
    func fetchRanges(
        _ record: TransferRecord, plan: SegmentPlan, mode: ConnectionTuner.Mode, sources: DownloadSources, validator: String,
        first: SegmentedDownload.FirstResponse?, sink: DownloadSink, settings: TransferSettings, pace: (@Sendable (Int) async throws -> Void)?,
        into box: SegmentedBox, http1: Bool = false
    ) async throws {
        let id = record.transferId
        var rules = SegmentedAttempt.Settings(mode: mode)
        rules.stallAfter = configuration.segmentStall
        rules.minimumSplit = configuration.segmentMinimumSplit
        rules.checkpointBytes = configuration.checkpointBytes
        rules.checkpointMaxInterval = configuration.checkpointMaxInterval
        rules.bytesPerSecond = [settings.daemon.bytesPerSecond, settings.session.bytesPerSecond, settings.own.bytesPerSecond].compactMap { $0 }.min()
        let download = try SegmentedDownload(
            id: id, attempt: SegmentedAttempt(plan: plan, sources: sources, settings: rules), validator: validator, sink: sink, worker: self,
            settings: settings, pace: pace, http1: http1, auth: authenticator(for: record, settings: settings)
        )
        box.current = download
        progress.set(id, bytes: plan.writtenBytes, total: plan.total)
        // The ranges are journaled before a second connection writes anywhere: from now on the
        // part file may have holes, and recovery must know to trust only the ranges.
        if first != nil { try await download.checkpoint() }
        try await download.run(first: first)
        sink.adoptWrittenFile()
    }

    /// Streams the body into the sink. A checkpoint runs beside the stream rather than in its way:
    /// its fsync waits for the disk while the next chunks arrive (at most one in flight; the
    /// loop waits for it before the next one and before it returns or throws).
    func stream(
        _ body: HTTPClientResponse.Body, into sink: DownloadSink, id: Int64, total: Int64?, pace: (@Sendable (Int) async throws -> Void)?
    ) async throws {
        var sinceCheckpoint: Int64 = 0
        var lastCheckpoint = ContinuousClock.now
        var checkpointing: Task<Void, any Error>?
        do {
            for try await buffer in body {
                try sink.append(buffer)
                try await progress.count(id, bytes: buffer.readableBytes, pace: pace)
                sinceCheckpoint += Int64(buffer.readableBytes)
                if let total, sink.length > total {
                    throw FerryError(.lengthMismatch, "The server sent more than the \(total) bytes it promised.")
                }
                let elapsed = lastCheckpoint.duration(to: .now)
                if elapsed >= configuration.checkpointInterval,
                    sinceCheckpoint >= configuration.checkpointBytes || elapsed >= configuration.checkpointMaxInterval
                {
                    try await checkpointing?.value
                    try sink.flush()
                    let durable = sink.length
                    checkpointing = Task { try await checkpoint(id, sink, durable: durable) }
                    sinceCheckpoint = 0
                    lastCheckpoint = .now
                }
            }
        } catch {
            _ = try? await checkpointing?.value
            throw error
        }
        try await checkpointing?.value
    }

    /// Write what is gathered, fsync, then journal the durable length (with a journaled progress
    /// event). Only where no stream is appending: after a stop or a failure this is what keeps
    /// the bytes that arrived before it.
    func checkpoint(_ id: Int64, _ sink: DownloadSink) async throws {
        try sink.flush()
        try await checkpoint(id, sink, durable: sink.length)
    }

    /// fsync, then journal `durable`: bytes written (flushed) before the fsync began.
    func checkpoint(_ id: Int64, _ sink: DownloadSink, durable: Int64) async throws {
        try await sink.sync()
        try await store.record(.checkpointed(durable: durable), of: id)
    }

    /// A checkpoint that must not fail the caller (on stop or after an error).
    func checkpoint(_ id: Int64, _ sink: DownloadSink, logger: Logger) async {
        do {
            try await checkpoint(id, sink)
        } catch {
            logger.warning("checkpoint failed", metadata: ["error": "\(error)"])
        }
    }

    func restart(_ id: Int64, _ sink: DownloadSink, reason: String) async throws {
        try sink.restart()
        progress.set(id, bytes: 0, total: nil)
        try await store.record(.restarted(reason: reason), of: id)
    }

}

/// The segmented download of an attempt, if it became one: what a stop must checkpoint.
final class SegmentedBox: Sendable {
    private let download = Mutex<SegmentedDownload?>(nil)
    var current: SegmentedDownload? {
        get { download.withLock { $0 } }
        set { download.withLock { $0 = newValue } }
    }
}
