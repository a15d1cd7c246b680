import FerryKit
import Foundation

/// The journal as engine and workers write to it: updates of one transfer's data (by workers)
/// and the control's changes of state (``write(_:to:)``), each one transaction. Their events reach live listeners through
/// ``TransferJournal/onCommit(_:)``.
struct TransferStore: Sendable {
    let journal: any TransferJournal

    @discardableResult
    func update<Result: Sendable>(
        id: Int64, _ body: @escaping @Sendable (inout TransferRecord) throws -> (Result, TransferEvent?)
    ) async throws -> (record: TransferRecord, result: Result, event: TransferEvent?) {
        try await journal.update(id: id, body)
    }

    @discardableResult
    func update(
        id: Int64, _ body: @escaping @Sendable (inout TransferRecord) throws -> TransferEvent?
    ) async throws -> TransferRecord {
        try await journal.update(id: id, body).record
    }
}

extension TransferRecord {
    /// The API's view: absolute paths, and live progress while running.
    func model(library: Library, live: ProgressBoard.Snapshot?) -> Transfer {
        let path = state == .completed && kind == .download ? filePath(in: library) : nil
        return Transfer(
            id: transferId, url: url, session: session, state: state,
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
            options: transferOptions?.redacted,
            connections: state == .running ? live?.connections : nil,
            ranges: state == .running ? (live?.ranges ?? journaledRanges) : (state == .completed ? nil : journaledRanges),
            mirrors: mirrors == nil ? nil : mirrorList, directory: directory, checksum: checksum.flatMap { try? Checksum(parsing: $0) },
            verifiedBy: verifiedBy.map { $0.split(separator: ",").map(String.init) },
            priority: priority == 0 ? nil : TransferPriority(rank: priority),
            // The disk is the truth: a stat for each completed download listed.
            fileMissing: path.map { access($0, F_OK) != 0 ? true : nil } ?? nil,
            member: state.isFinal ? nil : member
        )
    }

    /// The journaled ranges of a segmented download, with their durable bytes.
    var journaledRanges: [TransferRange]? {
        segments.flatMap(SegmentPlan.ranges(journalText:)).map { ranges in
            SegmentedDownload.shown(ranges.map { TransferRange(start: $0.start, end: $0.end, bytes: $0.durable - $0.start) })
        }
    }

    func event(_ kind: TransferEvent.Kind) -> TransferEvent {
        TransferEvent(kind: kind, transferId: transferId, session: session, bytesReceived: durableBytes, totalBytes: totalBytes)
    }
}
