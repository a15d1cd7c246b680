import AsyncHTTPClient
import FerryKit
import Foundation
import Logging
import NIOCore
import Synchronization

/// One run of one transfer: claim it, make one request (following redirects, and at most one
/// fresh request when the server mishandles a range), stream the body into the part file with
/// checkpoints, then move the file into the library — or checkpoint on a stop, or record why it
/// failed. Uploads go through an ``UploadAttempt`` instead. Every run applies the transfer's
/// settings (headers, timeouts, bandwidth, retry limit). Retries are the engine's business: the
/// worker only says after how long.
struct TransferWorker: Sendable {
    typealias Report = TransferControl.WorkerReport

    let store: TransferStore
    let library: Library
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
            return failed(
                url: record.url, error: error, progressed: moved, policy: settings.retryPolicy(configuration.retry),
                options: settings.merged, logger: logger
            )
        }
    }

    /// A pause or cancel came before the move into the library.
    struct FinishRefused: Error {}

    // MARK: - Download

    private func download(
        _ record: TransferRecord, into sink: DownloadSink, settings: TransferSettings, pace: (@Sendable (Int) async throws -> Void)?,
        segmented: SegmentedBox
    ) async throws {
        let id = record.transferId
        let url = URL(string: record.url)!
        // Mirrors still in use; one that fails in this attempt is left out of the rest of it.
        var mirrors = record.mirrorList.filter { $0.dropped == nil }.compactMap { URL(string: $0.url) }
        var startedOver = false
        // After the file changed under a segmented download, the rest of this attempt is one
        // stream: a file that keeps changing is fetched whole, as it is, from one response.
        var segmenting = true
        // A segmented download resumes each range from its own durable end.
        if let text = record.segments, let total = record.totalBytes, let validator = record.validator,
            let ranges = SegmentPlan.ranges(journalText: text), SegmentPlan.ranges(ranges, cover: total)
        {
            let plan = SegmentPlan(total: total, durable: ranges, minimumSplit: configuration.segmentMinimumSplit)
            try await store.update(id: id) { record in
                var event = record.event(.resumed)
                event.offset = plan.durableBytes
                return event
            }
            do {
                try await runSegments(
                    record, plan: plan, sources: DownloadSources(reference: url, mirrors: mirrors, own: url), validator: validator, first: nil,
                    sink: sink, settings: settings, pace: pace, into: segmented
                )
                return
            } catch let changed as SegmentedDownload.FileChanged {
                segmented.current = nil
                startedOver = true
                segmenting = false
                try await restart(id, sink, reason: changed.reason)
            }
        } else if record.segments != nil {
            try await restart(id, sink, reason: "its ranges in the journal were not readable")
        }
        var plan = startedOver
            ? ResumePlan(durableBytes: 0, knownTotal: nil, validator: nil)
            : ResumePlan(durableBytes: sink.length, knownTotal: record.totalBytes, validator: record.validator)
        if let reason = plan.discardReason {
            try await restart(id, sink, reason: reason)
        }
        while true {
            let (response, finalURL, source) = try await open(url, mirrors: &mirrors, plan: plan, record: record, settings: settings)
            let status = Int(response.status.code)
            let headers = response.headers
            let facts = ResumePlan.Response(
                status: status,
                contentRange: headers.first(name: "Content-Range"),
                contentLength: headers.first(name: "Content-Length").flatMap { Int64($0) },
                validator: Validator.from(etag: headers.first(name: "ETag"), lastModified: headers.first(name: "Last-Modified"))
            )
            switch plan.evaluate(facts) {
            case .startOver(let reason):
                guard !startedOver else {
                    throw FerryError(.rangeMismatch, "The server keeps answering range requests wrongly: \(reason).")
                }
                startedOver = true
                try await restart(id, sink, reason: reason)
                plan = ResumePlan(durableBytes: 0, knownTotal: nil, validator: nil)

            case .complete(let total):
                progress.set(id, bytes: sink.length, total: total)
                return

            case .write(let from, let total, let restartReason):
                if from == 0, sink.length > 0 { try sink.restart() }
                sink.hashExisting()
                let contentType = headers.first(name: "Content-Type")
                let nameHint = record.preferredName.map {
                    FileNamer.name(preferred: $0, contentType: contentType, url: finalURL)
                } ?? FileNamer.name(
                    contentDisposition: headers.first(name: "Content-Disposition"), url: finalURL,
                    suggested: record.suggestedName, contentType: contentType
                )
                // The server's digest of the whole file, checked at the end (a resumed download
                // keeps the one its first response gave, unless this one states another).
                let stated = DigestHeaders.checksum(
                    reprDigest: headers.first(name: "Repr-Digest"), contentDigest: headers.first(name: "Content-Digest"),
                    digest: headers.first(name: "Digest"), status: status, contentEncoding: headers.first(name: "Content-Encoding")
                )
                try await store.update(id: id) { record in
                    record.durableBytes = from
                    record.totalBytes = total
                    record.validator = facts.validator
                    record.nameHint = nameHint
                    if let stated { record.serverDigest = "\(stated.header) \(stated.checksum)" } else if from == 0 { record.serverDigest = nil }
                    var event = record.event(from > 0 ? .resumed : restartReason != nil ? .restarted : .started)
                    event.offset = from
                    event.reason = restartReason
                    return event
                }
                progress.set(id, bytes: from, total: total)
                if segmenting, let total, let validator = facts.validator, status == 206 || Self.acceptsRanges(headers.first(name: "Accept-Ranges")),
                    let mode = connectionMode(settings.merged), total - from >= 2 * configuration.segmentMinimumSplit
                {
                    do {
                        try await runSegments(
                            record, plan: SegmentPlan(total: total, done: from, minimumSplit: configuration.segmentMinimumSplit),
                            sources: DownloadSources(reference: finalURL, mirrors: mirrors.filter { $0 != source }, own: url),
                            validator: validator, first: .init(body: response.body, from: from), sink: sink, settings: settings, pace: pace,
                            mode: mode, into: segmented
                        )
                        return
                    } catch let changed as SegmentedDownload.FileChanged {
                        segmented.current = nil
                        startedOver = true
                        segmenting = false
                        try await restart(id, sink, reason: changed.reason)
                        plan = ResumePlan(durableBytes: 0, knownTotal: nil, validator: nil)
                        continue
                    }
                }
                try await stream(response.body, into: sink, id: id, total: total, pace: pace)
                if let total, sink.length != total {
                    throw FerryError(
                        .lengthMismatch, "The server promised \(total) bytes but the response ended after \(sink.length)."
                    )
                }
                return
            }
        }
    }

    /// The attempt's first answer (2xx or 416): from the URL, else from each mirror in turn. A
    /// source that fails is left out of the rest of the attempt while another remains, and a
    /// mirror without the file (404, 410, 401, 403) or with another copy of it (when resuming:
    /// the whole file, another length or validator) is dropped for good; each is journaled.
    /// When all fail, the error is one that waiting can mend if any was, else the last.
    /// - Returns: the response, its URL after redirects, and the source it came from.
    private func open(
        _ url: URL, mirrors: inout [URL], plan: ResumePlan, record: TransferRecord, settings: TransferSettings
    ) async throws -> (HTTPClientResponse, URL, URL) {
        var mendable: (any Error)?
        let sources = [url] + mirrors
        for source in sources {
            let isLast = source == sources.last
            var differs: String?
            do {
                let (response, finalURL) = try await fetcher.get(
                    source, headers: plan.requestHeaders, extra: settings.headers, headTimeout: settings.headTimeout, options: settings.merged
                )
                let status = Int(response.status.code)
                guard (200...299).contains(status) || status == 416 else {
                    throw HTTPStatusFailure(
                        status: status, reason: response.status.reasonPhrase, url: finalURL,
                        retryAfter: response.headers.first(name: "Retry-After")
                    )
                }
                differs = source == url ? nil : Self.mirrorDiffers(response, plan: plan)
                guard let differs else { return (response, finalURL, source) }
                throw FerryError(.rangeMismatch, "The mirror \(source.absoluteString) has another copy of the file: \(differs).")
            } catch {
                let failure = AttemptFailure(error, url: source)
                if failure.retryable { mendable = mendable ?? error }
                // A mirror without the file, or with another copy of it, is of no use again.
                let forGood = source != url && (differs != nil || !failure.retryable)
                if forGood || !isLast {
                    await dropSource(record.transferId, source, reason: differs.map { "its copy differs: \($0)" } ?? Self.brief(error), forGood: forGood)
                }
                if isLast { throw mendable ?? error }
                mirrors.removeAll { $0 == source }
            }
        }
        throw mendable ?? FerryError(.internalError, "No source of the file was tried.")
    }

    /// Why a mirror's answer to a resumed request shows another copy of the file, if it does.
    static func mirrorDiffers(_ response: HTTPClientResponse, plan: ResumePlan) -> String? {
        guard plan.offset > 0 else { return nil }
        let headers = response.headers
        let theirs = Validator.from(etag: headers.first(name: "ETag"), lastModified: headers.first(name: "Last-Modified"))
        if response.status.code == 200 { return "it answered a range request with the whole file (validator \(theirs ?? "none"))" }
        if let theirs, theirs != plan.validator { return "its validator is \(theirs), not \(plan.validator ?? "none")" }
        if let total = headers.first(name: "Content-Range").flatMap(ContentRange.init)?.total, let known = plan.knownTotal, total != known {
            return "it has \(total) bytes, not \(known)"
        }
        return nil
    }

    /// A few words of why a source failed: "answered 404 Not Found", "the connection to b failed".
    static func brief(_ error: any Error) -> String {
        if let status = error as? HTTPStatusFailure { return "answered \(status.status) \(status.reason)" }
        return AttemptFailure(error).reason
    }

    /// Journals that `source` is no longer used (a `mirrorDropped` event), and for good in the
    /// transfer's mirrors. A journal that refuses only loses the note.
    private func dropSource(_ id: Int64, _ source: URL, reason: String, forGood: Bool) async {
        logger.info("source dropped", metadata: ["transfer.id": "\(id)", "source": "\(source)", "reason": "\(reason)", "forGood": "\(forGood)"])
        do {
            try await store.update(id: id) { record in
                if forGood, let index = record.mirrorList.firstIndex(where: { $0.url == source.absoluteString && $0.dropped == nil }) {
                    record.mirrorList[index].dropped = reason
                }
                var event = record.event(.mirrorDropped)
                event.reason = "\(source.absoluteString) \(reason); \(forGood ? "dropped" : "left out of this attempt")"
                return event
            }
        } catch {
            logger.warning("could not journal a dropped source", metadata: ["error": "\(error)"])
        }
    }

    /// `Accept-Ranges: bytes`.
    static func acceptsRanges(_ header: String?) -> Bool {
        header?.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "bytes" } ?? false
    }

    /// How many connections a download may use: nil for one.
    private func connectionMode(_ options: TransferOptions) -> ConnectionTuner.Mode? {
        let cap = options.maxConnectionsPerHost ?? HostConnections.defaultCap
        switch options.connections {
        case 1?: return nil
        case let count?: return .fixed(count)
        case nil: return cap > 1 ? .adaptive(maximum: cap) : nil
        }
    }

    /// Runs the rest of the download over several connections (``SegmentedDownload``), then
    /// brings the sink up to date with the file for the finish.
    private func runSegments(
        _ record: TransferRecord, plan: SegmentPlan, sources: DownloadSources, validator: String, first: SegmentedDownload.FirstResponse?,
        sink: DownloadSink, settings: TransferSettings, pace: (@Sendable (Int) async throws -> Void)?,
        mode: ConnectionTuner.Mode? = nil, into box: SegmentedBox
    ) async throws {
        let id = record.transferId
        let options = settings.merged
        let mode = mode ?? connectionMode(options) ?? .fixed(1)
        var segmentSettings = SegmentedDownload.Settings(mode: mode)
        segmentSettings.stallAfter = configuration.segmentStall
        segmentSettings.minimumSplit = configuration.segmentMinimumSplit
        segmentSettings.maxPerHost = options.maxConnectionsPerHost ?? HostConnections.defaultCap
        segmentSettings.checkpointBytes = configuration.checkpointBytes
        segmentSettings.checkpointMaxInterval = configuration.checkpointMaxInterval
        segmentSettings.bytesPerSecond = [settings.daemon.bytesPerSecond, settings.session.bytesPerSecond, settings.own.bytesPerSecond]
            .compactMap { $0 }.min()
        let store = store
        let download = try SegmentedDownload(
            id: id, sources: sources, validator: validator, total: plan.total, plan: plan, settings: segmentSettings, partURL: sink.url, fetcher: fetcher,
            extraHeaders: settings.headers, headTimeout: settings.headTimeout, options: options, hosts: hosts, progress: progress, pace: pace,
            written: { [sink] prefix in sink.hash(through: prefix) },
            journal: { ranges in
                let durable = ranges.reduce(0) { $0 + ($1.durable - $1.start) }
                try await store.update(id: id) { record in
                    let text = SegmentPlan.journalText(ranges)
                    guard record.segments != text else { return nil }
                    record.segments = text
                    record.durableBytes = durable
                    return record.event(.progress)
                }
            },
            dropped: { source, reason, forGood in await dropSource(id, source, reason: reason, forGood: forGood) },
            logger: logger
        )
        box.current = download
        progress.set(id, bytes: plan.writtenBytes, total: plan.total)
        // The ranges are journaled before a second connection writes anywhere: from now on the
        // part file may have holes, and recovery must know to trust only the ranges.
        if record.segments == nil { try await download.checkpoint() }
        try await download.run(first: first)
        sink.adoptWrittenFile()
    }

    /// Streams the body into the sink. A checkpoint runs beside the stream rather than in its way:
    /// its fsync waits for the disk while the next chunks arrive (at most one in flight; the
    /// loop waits for it before the next one and before it returns or throws).
    private func stream(
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
    private func checkpoint(_ id: Int64, _ sink: DownloadSink) async throws {
        try sink.flush()
        try await checkpoint(id, sink, durable: sink.length)
    }

    /// fsync, then journal `durable`: bytes written (flushed) before the fsync began.
    private func checkpoint(_ id: Int64, _ sink: DownloadSink, durable: Int64) async throws {
        try await sink.sync()
        try await store.update(id: id) { record in
            guard record.durableBytes != durable else { return nil }
            record.durableBytes = durable
            return record.event(.progress)
        }
    }

    /// A checkpoint that must not fail the caller (on stop or after an error).
    private func checkpoint(_ id: Int64, _ sink: DownloadSink, logger: Logger) async {
        do {
            try await checkpoint(id, sink)
        } catch {
            logger.warning("checkpoint failed", metadata: ["error": "\(error)"])
        }
    }

    private func restart(_ id: Int64, _ sink: DownloadSink, reason: String) async throws {
        try sink.restart()
        progress.set(id, bytes: 0, total: nil)
        try await store.update(id: id) { record in
            record.durableBytes = 0
            record.totalBytes = nil
            record.validator = nil
            record.segments = nil
            record.serverDigest = nil
            var event = record.event(.restarted)
            event.reason = reason
            return event
        }
    }

    // MARK: - Finish

    /// Verified length, fsync, SHA-256, then (if the control still agrees) the atomic move into
    /// the library; the report says `completed`.
    private func complete(_ record: TransferRecord, _ sink: DownloadSink, mayFinish: @Sendable () async -> Bool) async throws -> Report {
        let id = record.transferId
        try sink.flush()
        try await sink.sync()
        let sha256 = try await sink.sha256()
        let length = sink.length
        guard let current = try await store.journal.transfer(id: id) else { throw FerryError.notFound(transfer: id) }
        if let total = current.totalBytes, total != length {
            throw FerryError(.lengthMismatch, "Expected \(total) bytes but the file has \(length).")
        }
        let verifiedBy = try await verify(current, sha256: sha256, sink: sink)
        guard await mayFinish() else { throw FinishRefused() }
        let name = record.outputName
            ?? current.nameHint
            ?? record.preferredName.map { FileNamer.name(preferred: $0, contentType: nil, url: URL(string: record.url)) }
            ?? FileNamer.name(contentDisposition: nil, url: URL(string: record.url), suggested: record.suggestedName, contentType: nil)
        var placed = current
        placed.fileName = try await library.place(
            part: sink.url, folder: record.folder, directory: record.directory, name: name, overwrite: record.overwrite
        ) { candidate in
            try await store.update(id: id) { record in
                record.fileName = candidate
                record.sha256 = sha256
                record.durableBytes = length
                record.totalBytes = length
                record.segments = nil
                record.verifiedBy = verifiedBy.isEmpty ? nil : verifiedBy.joined(separator: ",")
                return nil
            }
        }
        return .completed(path: placed.filePath(in: library) ?? sink.url.path, sha256: sha256)
    }

    /// Checks the finished file against the digests expected of it (the checksum given, the
    /// server's digest header). A mismatch fails the transfer with both digests and starts its
    /// bytes over, so nothing wrong is ever placed or resumed from.
    /// - Returns: what it was checked against (`checksum sha-256`, `Repr-Digest sha-256`).
    private func verify(_ record: TransferRecord, sha256: String, sink: DownloadSink) async throws -> [String] {
        var checked: [String] = []
        for (source, expected) in record.expectedDigests {
            let actual = expected.algorithm == .sha256
                ? sha256 : try await BlockingIO.run { () throws(FerryError) in try FileDigest.hex(of: sink.url, expected.algorithm) }
            guard actual == expected.hex else {
                try await restart(record.transferId, sink, reason: "its \(expected.algorithm.rawValue) did not match")
                let what = source == "checksum" ? "the checksum given" : "the server's \(source) header"
                throw FerryError(
                    .checksumMismatch,
                    "The file's \(expected.algorithm.rawValue) is \(actual), but \(what) says \(expected.hex). It was not kept; "
                        + "resume to download it again."
                )
            }
            checked.append("\(source) \(expected.algorithm.rawValue)")
        }
        return checked
    }

    // MARK: - Upload

    /// Sends the file; a stop needs no checkpoint (a resumable upload asks the server for its
    /// offset next time, a plain one starts over).
    private func upload(_ record: TransferRecord, _ settings: TransferSettings, signal: StopSignal, logger: Logger) async -> Report {
        let id = record.transferId
        let progress = progress
        progress.begin(id, session: record.session, bytes: 0, total: record.totalBytes)
        defer {
            progress.end(id)
            bandwidth.release(id)
        }
        let attempt = UploadAttempt(
            http: fetcher.clients.client(for: URL(string: record.url)!, options: settings.merged), store: store, progress: progress, extraHeaders: settings.headers,
            pace: bandwidth.pace(for: id, session: record.session, settings) ?? { _ in }, headTimeout: settings.headTimeout ?? .seconds(30),
            userAgent: configuration.userAgent, logger: logger
        )
        do {
            let response = try await signal.race {
                try await IdleWatchdog.run(limit: settings.idleTimeout, network: network, bytes: { progress.snapshot(id)?.bytes ?? 0 }) {
                    try await attempt.run(record)
                }
            }
            guard let response else { return .stopped }
            let done = try await completeUpload(record, response)
            logger.info("upload completed", metadata: ["upload.status": "\(response.status)"])
            return done
        } catch {
            if signal.isFired { return .stopped }
            if let refused = error as? UploadStatusFailure {
                _ = try? await store.update(id: id) { record in
                    record.record(refused.response)
                    return nil
                }
            }
            let moved = (progress.snapshot(id)?.bytes ?? 0) > record.durableBytes
            return failed(
                url: record.url, error: error, progressed: moved, policy: settings.retryPolicy(configuration.retry), options: settings.merged,
                logger: logger
            )
        }
    }

    /// Journals the server's answer and the file's SHA-256; the report says `completed`, with
    /// the file that was sent as its path.
    private func completeUpload(_ record: TransferRecord, _ response: RecordedResponse) async throws -> Report {
        guard let path = record.sourcePath else { throw FerryError(.internalError, "Upload \(record.transferId) has no file.") }
        let sha256 = try UploadAttempt.sha256(of: path)
        try await store.update(id: record.transferId) { record in
            record.sha256 = sha256
            if let total = record.totalBytes { record.durableBytes = total }
            record.record(response)
            return nil
        }
        return .completed(path: path, sha256: sha256)
    }

    // MARK: - Failure

    /// A failed attempt, as the control needs it to decide between waiting and failing.
    private func failed(
        url: String, error: any Error, progressed: Bool, policy: RetryPolicy, options: TransferOptions = TransferOptions(), logger: Logger
    ) -> Report {
        let target = URL(string: url)
        let failure = AttemptFailure(error, url: target, proxy: target.flatMap { fetcher.clients.proxy(for: $0, options: options) })
        logger.info("attempt failed", metadata: ["error": "\(failure.error.message)", "retryable": "\(failure.retryable)"])
        return .failed(.init(failure: failure, progressed: progressed, policy: policy, unit: random()))
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
