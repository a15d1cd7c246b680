import AsyncHTTPClient
import FerryModel
import Foundation
import Logging

extension TransferWorker {

    /// Verified length, fsync, SHA-256, then (if the control still agrees) the atomic move into
    /// the library; the report says `completed`.
    func complete(_ record: TransferRecord, _ sink: DownloadSink, mayFinish: @Sendable () async -> Bool) async throws -> Report {
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
            try await store.record(.nameReserved(name: candidate, sha256: sha256, length: length, verifiedBy: verifiedBy), of: id)
        }
        return .completed(path: placed.filePath(in: library) ?? sink.url.path, sha256: sha256)
    }

    /// Checks the finished file against the digests expected of it (the checksum given, the
    /// server's digest header). A mismatch fails the transfer with both digests and starts its
    /// bytes over, so nothing wrong is ever placed or resumed from.
    /// - Returns: what it was checked against (`checksum sha-256`, `Repr-Digest sha-256`).
    func verify(_ record: TransferRecord, sha256: String, sink: DownloadSink) async throws -> [String] {
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

    /// A failed attempt, as the control needs it to decide between waiting and failing.
    func failed(
        url: String, error: any Error, progressed: Bool, policy: RetryPolicy, options: TransferOptions = TransferOptions(), logger: Logger
    ) -> Report {
        let target = URL(string: url)
        let failure = AttemptFailure(error, url: target, proxy: target.flatMap { fetcher.clients.proxy(for: $0, options: options) })
        logger.info("attempt failed", metadata: ["error": "\(failure.error.message)", "retryable": "\(failure.retryable)"])
        return .failed(.init(failure: failure, progressed: progressed, policy: policy, unit: random()))
    }
}
