import AsyncHTTPClient
import FerryModel
import Foundation
import NIOSSL
import Logging

extension TransferWorker {

    /// Sends the file; a stop needs no checkpoint (a resumable upload asks the server for its
    /// offset next time, a plain one starts over).
    func upload(_ record: TransferRecord, _ settings: TransferSettings, signal: StopSignal, logger: Logger) async -> Report {
        let id = record.transferId
        let progress = progress
        progress.begin(id, session: record.session, bytes: 0, total: record.totalBytes)
        defer {
            progress.end(id)
            bandwidth.release(id)
        }
        let tls: TLSConfiguration?
        do {
            tls = try fetcher.clients.tlsConfiguration(for: settings.merged)
        } catch {
            return failed(url: record.url, error: error, progressed: false, policy: settings.retryPolicy(configuration.retry), options: settings.merged, logger: logger)
        }
        var made = UploadAttempt(
            http: fetcher.clients.client(for: URL(string: record.url)!, options: settings.merged), tls: tls, store: store, progress: progress, extraHeaders: settings.headers,
            pace: bandwidth.pace(for: id, session: record.session, settings) ?? { _ in }, headTimeout: settings.headTimeout ?? .seconds(30),
            userAgent: configuration.userAgent, logger: logger
        )
        made.auth = authenticator(for: record, settings: settings)
        let attempt = made
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
                _ = try? await store.record(.uploadAnswered(refused.response), of: id)
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
    func completeUpload(_ record: TransferRecord, _ response: RecordedResponse) async throws -> Report {
        guard let path = record.sourcePath else { throw FerryError(.internalError, "Upload \(record.transferId) has no file.") }
        let sha256 = try UploadAttempt.sha256(of: path)
        try await store.record(.uploaded(sha256: sha256, response: response), of: record.transferId)
        return .completed(path: path, sha256: sha256)
    }
}
