import AsyncHTTPClient
import FerryKit
import Foundation
import Logging
import NIOCore

/// One run of one transfer: claim it, make one request (following redirects, and at most one
/// fresh request when the server mishandles a range), stream the body into the part file with
/// checkpoints, then move the file into the library — or checkpoint on a stop, or record why it
/// failed. Uploads go through an ``UploadAttempt`` instead. Every run applies the transfer's
/// settings (headers, timeouts, bandwidth, retry limit). Retries are the engine's business: the
/// worker only says after how long.
struct TransferWorker: Sendable {
    enum Outcome: Sendable {
        case done
        /// Try again after `after`, or sooner when the network changes if `forNetwork`.
        case wait(after: Duration, forNetwork: Bool)
    }

    let store: TransferStore
    let library: Library
    let fetcher: HTTPFetcher
    let progress: ProgressBoard
    let bandwidth: Bandwidth
    let network: NetworkChanges
    let configuration: TransferEngine.Configuration
    let random: @Sendable () -> Double
    let logger: Logger

    func run(id: Int64, signal: StopSignal) async -> Outcome {
        var logger = logger
        logger[metadataKey: "transfer.id"] = "\(id)"
        let record: TransferRecord
        do {
            record = try await store.apply(.start, to: id) { record in
                record.attempts += 1
                record.retryAt = nil
                return nil
            }.record
        } catch {
            return .done  // Paused, cancelled or removed since it was scheduled.
        }

        let settings: TransferSettings
        do {
            settings = try await store.journal.settings(for: record)
        } catch {
            return await recordFailure(id: id, url: record.url, error: error, progressed: false, policy: configuration.retry, logger: logger)
        }
        if record.kind == .upload { return await upload(record, settings, signal: signal, logger: logger) }

        let sink: DownloadSink
        do {
            try FileManager.default.createDirectory(at: library.partials, withIntermediateDirectories: true)
            sink = try DownloadSink(url: library.partURL(for: id), durableBytes: record.durableBytes)
        } catch {
            return await recordFailure(
                id: id, url: record.url, error: error, progressed: false, policy: settings.retryPolicy(configuration.retry), options: settings.merged,
                logger: logger
            )
        }
        defer {
            sink.close()
            progress.end(id)
        }
        progress.begin(id, session: record.session, bytes: sink.length, total: record.totalBytes)
        let startLength = sink.length
        let pace = bandwidth.pace(for: record.session, settings)
        let progress = progress

        do {
            // On the event loop that will read the connection: see EventLoopExecutor.
            let downloaded: Void? = try await withTaskExecutorPreference(fetcher.executor()) {
                try await signal.race {
                    try await IdleWatchdog.run(limit: settings.idleTimeout, network: network, bytes: { progress.snapshot(id)?.bytes ?? 0 }) {
                        try await download(record, into: sink, settings: settings, pace: pace)
                    }
                }
            }
            guard downloaded != nil else {
                if sink.isTouched { await checkpoint(id, sink, logger: logger) }
                return .done
            }
            try await complete(record, sink)
            logger.info("completed", metadata: ["transfer.bytes": "\(sink.length)"])
            return .done
        } catch {
            // An attempt that wrote nothing (a refused connection, no network) has nothing to
            // make durable: no fsync, no journal write, which is most of a waiting transfer's cost.
            if sink.isTouched { await checkpoint(id, sink, logger: logger) }
            if signal.isFired { return .done }
            return await recordFailure(
                id: id, url: record.url, error: error, progressed: sink.length > startLength, policy: settings.retryPolicy(configuration.retry),
                options: settings.merged, logger: logger
            )
        }
    }

    // MARK: - Download

    private func download(
        _ record: TransferRecord, into sink: DownloadSink, settings: TransferSettings, pace: (@Sendable (Int) async throws -> Void)?
    ) async throws {
        let id = record.transferId
        var plan = ResumePlan(durableBytes: sink.length, knownTotal: record.totalBytes, validator: record.validator)
        if let reason = plan.discardReason {
            try await restart(id, sink, reason: reason)
        }
        var startedOver = false
        let url = URL(string: record.url)!
        while true {
            let (response, finalURL) = try await fetcher.get(
                url, headers: plan.requestHeaders, extra: settings.headers, headTimeout: settings.headTimeout, options: settings.merged
            )
            let status = Int(response.status.code)
            guard (200...299).contains(status) || status == 416 else {
                throw HTTPStatusFailure(
                    status: status, reason: response.status.reasonPhrase, url: finalURL,
                    retryAfter: response.headers.first(name: "Retry-After")
                )
            }
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
                try await store.update(id: id) { record in
                    record.durableBytes = from
                    record.totalBytes = total
                    record.validator = facts.validator
                    record.nameHint = nameHint
                    var event = record.event(from > 0 ? .resumed : restartReason != nil ? .restarted : .started)
                    event.offset = from
                    event.reason = restartReason
                    return event
                }
                progress.set(id, bytes: from, total: total)
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
                try await count(buffer.readableBytes, of: id, pace: pace)
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

    /// How much of a read is counted, and waited for under a bandwidth limit, at a time.
    static let paceStep = 64 * 1024

    /// Counts a read's bytes. Under a bandwidth limit it waits for them, which holds the server
    /// back (the client reads again only when asked), 64 KiB at a time: a read is up to 256 KiB,
    /// and progress and the limit should not move a second's worth at once at 256 KiB/s.
    private func count(_ bytes: Int, of id: Int64, pace: (@Sendable (Int) async throws -> Void)?) async throws {
        guard let pace else { return progress.add(id, bytes: bytes) }
        var uncounted = bytes
        while uncounted > 0 {
            let step = min(uncounted, Self.paceStep)
            progress.add(id, bytes: step)
            try await pace(step)
            uncounted -= step
        }
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
            var event = record.event(.restarted)
            event.reason = reason
            return event
        }
    }

    // MARK: - Finish

    /// Verified length, fsync, SHA-256, atomic move into the library, then `completed`.
    private func complete(_ record: TransferRecord, _ sink: DownloadSink) async throws {
        let id = record.transferId
        try sink.flush()
        try await sink.sync()
        let sha256 = try await sink.sha256()
        let length = sink.length
        guard let current = try await store.journal.transfer(id: id) else { throw FerryError.notFound(transfer: id) }
        if let total = current.totalBytes, total != length {
            throw FerryError(.lengthMismatch, "Expected \(total) bytes but the file has \(length).")
        }
        let name = current.nameHint
            ?? record.preferredName.map { FileNamer.name(preferred: $0, contentType: nil, url: URL(string: record.url)) }
            ?? FileNamer.name(contentDisposition: nil, url: URL(string: record.url), suggested: record.suggestedName, contentType: nil)
        _ = try await library.place(part: sink.url, folder: record.folder, name: name) { candidate in
            try await store.update(id: id) { record in
                guard record.state == .running else {
                    throw FerryError.invalidState("The transfer is \(record.state.rawValue).")
                }
                record.fileName = candidate
                record.sha256 = sha256
                record.durableBytes = length
                record.totalBytes = length
                return nil
            }
        }
        let library = library
        try await store.apply(.complete, to: id) { record in
            record.completedAt = Date()
            record.error = nil
            record.failures = 0
            var event = record.event(.completed)
            event.path = record.relativePath.map { library.absolutePath($0) }
            event.sha256 = sha256
            return event
        }
    }

    // MARK: - Upload

    /// Sends the file; a stop needs no checkpoint (a resumable upload asks the server for its
    /// offset next time, a plain one starts over).
    private func upload(_ record: TransferRecord, _ settings: TransferSettings, signal: StopSignal, logger: Logger) async -> Outcome {
        let id = record.transferId
        let progress = progress
        progress.begin(id, session: record.session, bytes: 0, total: record.totalBytes)
        defer { progress.end(id) }
        let attempt = UploadAttempt(
            http: fetcher.clients.client(for: URL(string: record.url)!, options: settings.merged), store: store, progress: progress, extraHeaders: settings.headers,
            pace: bandwidth.pace(for: record.session, settings) ?? { _ in }, headTimeout: settings.headTimeout ?? .seconds(30),
            userAgent: configuration.userAgent, logger: logger
        )
        do {
            let response = try await signal.race {
                try await IdleWatchdog.run(limit: settings.idleTimeout, network: network, bytes: { progress.snapshot(id)?.bytes ?? 0 }) {
                    try await attempt.run(record)
                }
            }
            guard let response else { return .done }
            try await completeUpload(record, response)
            logger.info("upload completed", metadata: ["upload.status": "\(response.status)"])
            return .done
        } catch {
            if signal.isFired { return .done }
            if let refused = error as? UploadStatusFailure {
                _ = try? await store.update(id: id) { record in
                    record.record(refused.response)
                    return nil
                }
            }
            let moved = (progress.snapshot(id)?.bytes ?? 0) > record.durableBytes
            return await recordFailure(
                id: id, url: record.url, error: error, progressed: moved, policy: settings.retryPolicy(configuration.retry), options: settings.merged,
                logger: logger
            )
        }
    }

    private func completeUpload(_ record: TransferRecord, _ response: RecordedResponse) async throws {
        guard let path = record.sourcePath else { throw FerryError(.internalError, "Upload \(record.transferId) has no file.") }
        let sha256 = try UploadAttempt.sha256(of: path)
        try await store.apply(.complete, to: record.transferId) { record in
            record.completedAt = Date()
            record.error = nil
            record.failures = 0
            record.sha256 = sha256
            if let total = record.totalBytes { record.durableBytes = total }
            record.record(response)
            var event = record.event(.completed)
            event.path = path  // For an upload, the file that was sent.
            event.sha256 = sha256
            return event
        }
    }

    // MARK: - Failure

    /// Journals a failed attempt: the transfer waits (with the few words of why and when it tries
    /// again) if waiting can mend it and its resource timeout allows, else it fails.
    private func recordFailure(
        id: Int64, url: String, error: any Error, progressed: Bool, policy: RetryPolicy, options: TransferOptions = TransferOptions(), logger: Logger
    ) async -> Outcome {
        let target = URL(string: url)
        let failure = AttemptFailure(error, url: target, proxy: target.flatMap { fetcher.clients.proxy(for: $0, options: options) })
        let unit = random()
        let now = Date()
        do {
            let outcome = try await store.update(id: id) { (record: inout TransferRecord) -> (Outcome?, TransferEvent?) in
                record.failures = progressed ? 1 : record.failures + 1
                record.fileName = nil  // A failed move into the library is not finishing any more.
                record.sha256 = nil
                if progressed || record.waitingSince == nil { record.waitingSince = now }
                let waited = Duration.seconds(now.timeIntervalSince(record.waitingSince ?? now))
                let delay = failure.retryable
                    ? policy.delay(afterFailures: record.failures, retryAfter: failure.retryAfter, unit: unit, waited: waited) : nil
                let transition = try TransferLifecycle.transition(from: record.state, on: delay == nil ? .fail : .wait)
                guard transition.changed else { return (nil, nil) }
                record.state = transition.state
                if let delay {
                    record.error = failure.error.info
                    record.retryAt = now.addingTimeInterval(delay / .seconds(1))
                    record.waitReason = failure.reason
                    record.waitsForNetwork = failure.waitsForNetwork
                    var event = record.event(.waiting)
                    event.attempt = record.attempts
                    event.retryAt = record.retryAt
                    event.error = failure.error.info
                    event.reason = failure.reason
                    return (.wait(after: delay, forNetwork: failure.waitsForNetwork), event)
                }
                record.waitReason = nil
                record.waitsForNetwork = false
                record.error = TransferErrorInfo(
                    code: failure.error.code.rawValue, message: Self.giveUp(failure, failures: record.failures, waited: waited, policy: policy)
                )
                var event = record.event(.failed)
                event.error = record.error
                return (nil, event)
            }
            logger.info("attempt failed", metadata: ["error": "\(failure.error.message)", "transfer.wait": "\(outcome.result.map { "\($0)" } ?? "no")"])
            return outcome.result ?? .done
        } catch {
            // Paused or cancelled meanwhile: the person's command wins.
            return .done
        }
    }

    /// Why a transfer stops trying: the failure itself, or the limit that ended the waiting.
    static func giveUp(_ failure: AttemptFailure, failures: Int, waited: Duration, policy: RetryPolicy) -> String {
        guard failure.retryable else { return failure.error.message }
        if let maxAttempts = policy.maxAttempts, failures >= maxAttempts {
            return "Gave up after \(failures) failed attempts. Last error: \(failure.error.message)"
        }
        if let retryAfter = failure.retryAfter, retryAfter > policy.maxRetryAfter {
            return "The server asks to wait \(DurationText.describe(retryAfter)), longer than Ferry waits (\(DurationText.describe(policy.maxRetryAfter))). \(failure.error.message)"
        }
        return "Gave up after \(DurationText.describe(waited)) without progress (the resource timeout is \(DurationText.describe(policy.resourceTimeout))). Last error: \(failure.error.message)"
    }
}
