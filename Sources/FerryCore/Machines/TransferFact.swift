import FerryModel
import Foundation

/// What an attempt (or the engine's recovery) learned about a transfer, other than a change of
/// state (``TransferChange``, the control's): workers report facts, and ``TransferStore`` journals
/// them, one transaction each. How each fact changes the row, and the event it journals, is
/// ``TransferRecord/apply(_:)-(TransferFact)``: pure, and the only place that says it.
enum TransferFact: Sendable {
    /// The server's answer was accepted: bytes are written from `from` (0: from the start).
    struct Accepted: Sendable, Hashable {
        var from: Int64
        var total: Int64?
        var validator: String?
        /// The file's name as the answer suggests it.
        var nameHint: String
        /// The server's digest of the whole file (`Repr-Digest sha-256=…`), if it states one.
        var serverDigest: String?
        /// Why the bytes start again from zero, if they do.
        var restartReason: String?
        /// The HTTP version of the answer (`HTTP/2`, `HTTP/1.1`).
        var httpVersion: String? = nil
        /// Mirrors the answer offered (RFC 6249), added to the transfer's.
        var offeredMirrors: [String] = []
    }

    // MARK: Downloads

    case accepted(Accepted)
    /// A segmented download continues from its journaled ranges (`offset` bytes of them).
    case rangesResumed(offset: Int64)
    /// Bytes on disk (fsynced) from the start of the file.
    case checkpointed(durable: Int64)
    /// A segmented download's ranges with their durable ends (fsynced), and their sum.
    case rangesCheckpointed(ranges: String, durable: Int64)
    /// The bytes start again from zero.
    case restarted(reason: String)
    /// A source no longer used: dropped from the mirrors for good, or left out of this attempt.
    case sourceDropped(url: String, reason: String, forGood: Bool)
    /// The file's name in the library, reserved before the move (recovery finishes a move that
    /// a crash interrupted from it), with what the file is.
    case nameReserved(name: String, sha256: String, length: Int64, verifiedBy: [String])

    // MARK: Uploads

    case uploadProtocol(UploadProtocol)
    /// Where a resumable upload continues.
    case uploadURL(String)
    /// The attempt starts at the server's offset, the durable progress of an upload.
    case uploadStarted(offset: Int64, size: Int64)
    /// The server's answer (a refusal, or the final one).
    case uploadAnswered(RecordedResponse)
    /// The upload is done: the file's SHA-256 and the server's final answer.
    case uploaded(sha256: String, response: RecordedResponse)

    // MARK: The engine's

    /// In a cluster: taken over from `member` without its part file, so from zero.
    case handedOver(member: String)
    /// At start: what the part file can be trusted with (``PartFileTail``).
    case durable(Int64)
    /// At start: an interrupted move that could not be finished runs again, from its part file
    /// (`keepsBytes`) or from zero (``InterruptedMove``).
    case nameForgotten(keepsBytes: Bool)
    /// A new URL for the same file (a signed link that expired).
    case url(String)
}

extension TransferRecord {
    /// Applies `fact` and returns the event it journals, if any.
    mutating func apply(_ fact: TransferFact) -> TransferEvent? {
        switch fact {
        case .accepted(let accepted):
            durableBytes = accepted.from
            totalBytes = accepted.total
            validator = accepted.validator
            nameHint = accepted.nameHint
            if let digest = accepted.serverDigest { serverDigest = digest } else if accepted.from == 0 { serverDigest = nil }
            httpVersion = accepted.httpVersion ?? httpVersion
            if !accepted.offeredMirrors.isEmpty {
                mirrorList += accepted.offeredMirrors.filter { url in !mirrorList.contains { $0.url == url } }.map { TransferMirror(url: $0) }
            }
            var event = event(accepted.from > 0 ? .resumed : accepted.restartReason != nil ? .restarted : .started)
            event.offset = accepted.from
            event.reason = accepted.restartReason
            return event
        case .rangesResumed(let offset):
            var event = event(.resumed)
            event.offset = offset
            return event
        case .checkpointed(let durable):
            guard durableBytes != durable else { return nil }
            durableBytes = durable
            return event(.progress)
        case .rangesCheckpointed(let ranges, let durable):
            guard segments != ranges else { return nil }
            segments = ranges
            durableBytes = durable
            return event(.progress)
        case .restarted(let reason):
            startOver()
            var event = event(.restarted)
            event.reason = reason
            return event
        case .sourceDropped(let url, let reason, let forGood):
            if forGood, let index = mirrorList.firstIndex(where: { $0.url == url && $0.dropped == nil }) {
                mirrorList[index].dropped = reason
            }
            var event = event(.mirrorDropped)
            event.reason = "\(url) \(reason); \(forGood ? "dropped" : "left out of this attempt")"
            return event
        case .nameReserved(let name, let sha256, let length, let verifiedBy):
            fileName = name
            self.sha256 = sha256
            durableBytes = length
            totalBytes = length
            segments = nil
            self.verifiedBy = verifiedBy.isEmpty ? nil : verifiedBy.joined(separator: ",")
            return nil
        case .uploadProtocol, .uploadURL, .uploadStarted, .uploadAnswered, .uploaded, .handedOver, .durable, .nameForgotten, .url:
            return applyOther(fact)
        }
    }

    /// The facts of uploads and of the engine's own.
    private mutating func applyOther(_ fact: TransferFact) -> TransferEvent? {
        switch fact {
        case .uploadProtocol(let chosen):
            uploadProtocol = chosen
            return nil
        case .uploadURL(let url):
            uploadURL = url
            return nil
        case .uploadStarted(let offset, let size):
            durableBytes = offset
            totalBytes = size
            var event = event(offset > 0 ? .resumed : .started)
            event.offset = offset
            return event
        case .uploadAnswered(let response):
            record(response)
            return nil
        case .uploaded(let sha256, let response):
            self.sha256 = sha256
            if let total = totalBytes { durableBytes = total }
            record(response)
            return nil
        case .handedOver(let member):
            let had = durableBytes
            durableBytes = 0
            segments = nil
            var event = event(.restarted)
            event.reason = "\(member) took the transfer over without its part file (\(had) bytes on the member that ran it before): the library is not on storage every member shares, so it starts from zero."
            return event
        case .durable(let bytes):
            durableBytes = bytes
            return nil
        case .nameForgotten(let keepsBytes):
            fileName = nil
            sha256 = nil
            if !keepsBytes { durableBytes = 0 }
            return nil
        case .url(let url):
            self.url = url
            return nil
        case .accepted, .rangesResumed, .checkpointed, .rangesCheckpointed, .restarted, .sourceDropped, .nameReserved:
            preconditionFailure("a download's fact is apply(_:)'s")
        }
    }

    /// Nothing of the bytes so far counts.
    private mutating func startOver() {
        durableBytes = 0
        totalBytes = nil
        validator = nil
        segments = nil
        serverDigest = nil
    }
}
