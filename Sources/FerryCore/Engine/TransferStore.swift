import FerryModel
import Foundation

/// The one writer of a transfer's row: the control's changes of state (``write(_:to:)``) and
/// what workers and recovery learned (``record(_:of:)``), each one transaction; what each does to
/// the row is pure (``TransferRecord/apply(_:)-(TransferChange)``, ``TransferRecord/apply(_:)-(TransferFact)``).
/// Their events reach live listeners through ``TransferJournal/onCommit(_:)``.
struct TransferStore: Sendable {
    let journal: any TransferJournal

    /// Journals `fact` and returns the record as written.
    @discardableResult
    func record(_ fact: TransferFact, of id: Int64) async throws -> TransferRecord {
        try await journal.update(id: id) { record in ((), record.apply(fact)) }.record
    }
}

extension TransferRecord {
    /// The API's view: absolute paths, and live progress while running.
    /// The API's view without live progress (a finished transfer's).
    package func model(library: LibraryFolder) -> Transfer { model(library: library, live: nil) }

    func model(library: LibraryFolder, live: ProgressBoard.Snapshot?) -> Transfer {
        model(library: library, live: live, shownOptions: transferOptions?.redacted)
    }

    /// - Parameter shownOptions: its options as the API shows them, when the caller has them
    ///   decoded already (a batch of new transfers that share them).
    func model(library: LibraryFolder, live: ProgressBoard.Snapshot?, shownOptions: TransferOptions?) -> Transfer {
        let path = state == .completed && kind == .download ? filePath(in: library) : nil
        return Transfer(
            id: transferId, url: HostCredential.redactingPassword(in: url), session: session, state: state,
            bytesReceived: live?.bytes ?? (state == .completed ? (totalBytes ?? durableBytes) : durableBytes),
            totalBytes: live?.total ?? totalBytes,
            path: path,
            sha256: state == .completed ? sha256 : nil,
            error: error, waitReason: state == .waiting ? waitReason : nil, folder: folder, taskDescription: taskDescription,
            bytesPerSecond: state == .running ? live?.bytesPerSecond : nil,
            etaSeconds: state == .running ? live?.etaSeconds : nil,
            attempts: attempts, retryAt: state == .waiting ? retryAt : nil,
            createdAt: createdAt, updatedAt: updatedAt, completedAt: completedAt, kind: kind, method: method,
            sourcePath: sourcePath, uploadProtocol: uploadProtocol, response: uploadResponse, startAfter: startAfter,
            options: shownOptions,
            connections: state == .running ? live?.connections : nil,
            ranges: state == .running ? (live?.ranges ?? journaledRanges) : (state == .completed ? nil : journaledRanges),
            mirrors: mirrors == nil ? nil : mirrorList, directory: directory, checksum: checksum.flatMap { try? Checksum(parsing: $0) },
            verifiedBy: verifiedBy.map { $0.split(separator: ",").map(String.init) },
            priority: priority == 0 ? nil : TransferPriority(rank: priority),
            // The disk is the truth: a stat for each completed download listed.
            fileMissing: path.map { access($0, F_OK) != 0 ? true : nil } ?? nil,
            member: state.isFinal ? nil : member, requestedBy: requestedBy, httpVersion: httpVersion
        )
    }

    /// The journaled ranges of a segmented download, with their durable bytes.
    var journaledRanges: [TransferRange]? {
        segments.flatMap(SegmentPlan.ranges(journalText:)).map { ranges in
            SegmentedAttempt.shown(ranges.map { TransferRange(start: $0.start, end: $0.end, bytes: $0.durable - $0.start) })
        }
    }

    func event(_ kind: TransferEvent.Kind) -> TransferEvent {
        TransferEvent(kind: kind, transferId: transferId, session: session, bytesReceived: durableBytes, totalBytes: totalBytes)
    }
}
