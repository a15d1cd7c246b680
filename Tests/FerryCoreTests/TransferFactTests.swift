import FerryKit
import Foundation
import Testing

@testable import FerryCore

/// What each fact a worker reports does to a transfer's row, and the event it journals: the one
/// place that says it (``TransferRecord/apply(_:)-(TransferFact)``).
@Suite struct TransferFactTests {
    static func record(durable: Int64 = 500, total: Int64? = 1_000) -> TransferRecord {
        var record = TransferRecord(session: "s", url: "http://127.0.0.1/f", folder: "Downloads")
        record.id = 7
        record.state = .running
        record.durableBytes = durable
        record.totalBytes = total
        record.validator = "\"v1\""
        record.serverDigest = "Repr-Digest sha-256=abc"
        return record
    }

    @Test func anAcceptedAnswerSaysWhereWritingStarts() {
        var resumed = Self.record()
        let event = resumed.apply(.accepted(.init(from: 500, total: 1_000, validator: "\"v1\"", nameHint: "f.bin", serverDigest: nil, restartReason: nil)))
        #expect(event?.kind == .resumed && event?.offset == 500)
        #expect(resumed.serverDigest == "Repr-Digest sha-256=abc", "a resumed download keeps the first answer's digest")
        var fresh = Self.record(durable: 0)
        #expect(fresh.apply(.accepted(.init(from: 0, total: 9, validator: nil, nameHint: "g", serverDigest: nil, restartReason: nil)))?.kind == .started)
        #expect(fresh.serverDigest == nil && fresh.totalBytes == 9 && fresh.nameHint == "g")
        var restarted = Self.record()
        let again = restarted.apply(.accepted(.init(from: 0, total: 9, validator: nil, nameHint: "g", serverDigest: "Digest x", restartReason: "the file changed")))
        #expect(again?.kind == .restarted && again?.reason == "the file changed" && restarted.serverDigest == "Digest x")
    }

    /// The control decides a start, then a cancel arrives before the worker journals the start:
    /// the start must not bring the cancelled row back to running (the accelerated year's stuck
    /// day: a cancelled transfer left "running" for ever).
    @Test func aStartJournaledAfterACancelDoesNotUndoIt() {
        for state in [TransferState.queued, .waiting] {
            var record = Self.record()
            record.state = state
            _ = record.apply(TransferChange.started)
            #expect(record.state == .running && record.attempts == 1, "\(state)")
        }
        for state in [TransferState.cancelled, .paused, .completed, .failed] {
            var record = Self.record()
            record.state = state
            _ = record.apply(TransferChange.started)
            #expect(record.state == state && record.attempts == 0, "\(state) stays \(state)")
        }
    }

    @Test func checkpointsJournalOnlyWhatMoved() {
        var record = Self.record()
        #expect(record.apply(.checkpointed(durable: 500)) == nil)
        #expect(record.apply(.checkpointed(durable: 800))?.kind == .progress)
        #expect(record.durableBytes == 800)
        #expect(record.apply(.rangesCheckpointed(ranges: "[[0,10,20]]", durable: 10))?.kind == .progress)
        #expect(record.apply(.rangesCheckpointed(ranges: "[[0,10,20]]", durable: 10)) == nil)
        #expect(record.segments == "[[0,10,20]]")
    }

    @Test func aRestartForgetsEveryByteAndWhatTheServerSaid() {
        var record = Self.record()
        record.segments = "[[0,10,20]]"
        let event = record.apply(.restarted(reason: "its sha-256 did not match"))
        #expect(event?.kind == .restarted && event?.reason == "its sha-256 did not match")
        #expect(record.durableBytes == 0 && record.totalBytes == nil && record.validator == nil && record.segments == nil && record.serverDigest == nil)
    }

    @Test func aDroppedMirrorIsMarkedOnlyForGood() {
        var record = Self.record()
        record.mirrorList = [TransferMirror(url: "http://a/f"), TransferMirror(url: "http://b/f")]
        let once = record.apply(.sourceDropped(url: "http://a/f", reason: "answered 503", forGood: false))
        #expect(once?.kind == .mirrorDropped && once?.reason == "http://a/f answered 503; left out of this attempt")
        #expect(record.mirrorList.allSatisfy { $0.dropped == nil })
        _ = record.apply(.sourceDropped(url: "http://b/f", reason: "answered 404", forGood: true))
        #expect(record.mirrorList.map(\.dropped) == [nil, "answered 404"])
    }

    @Test func theReservedNameCarriesWhatRecoveryNeeds() {
        var record = Self.record()
        record.segments = "[[0,10,20]]"
        #expect(record.apply(.nameReserved(name: "f.bin", sha256: "abc", length: 1_000, verifiedBy: ["checksum sha-256"])) == nil)
        #expect(record.fileName == "f.bin" && record.sha256 == "abc" && record.durableBytes == 1_000 && record.totalBytes == 1_000)
        #expect(record.segments == nil && record.verifiedBy == "checksum sha-256")
        // Recovery that cannot finish the move forgets the name; without the part file, the bytes too.
        var kept = record
        _ = kept.apply(.nameForgotten(keepsBytes: true))
        #expect(kept.fileName == nil && kept.sha256 == nil && kept.durableBytes == 1_000)
        _ = record.apply(.nameForgotten(keepsBytes: false))
        #expect(record.durableBytes == 0)
    }

    @Test func aHandOverWithoutThePartFileStartsFromZeroAndSaysWhy() {
        var record = Self.record()
        let event = record.apply(.handedOver(member: "host-b"))
        #expect(record.durableBytes == 0 && event?.kind == .restarted)
        #expect(event?.reason?.hasPrefix("host-b took the transfer over without its part file (500 bytes") == true)
    }

    @Test func anUploadStartsAtTheServersOffset() {
        var record = Self.record(durable: 0, total: nil)
        #expect(record.apply(.uploadStarted(offset: 0, size: 10))?.kind == .started)
        #expect(record.apply(.uploadStarted(offset: 4, size: 10))?.kind == .resumed)
        #expect(record.durableBytes == 4 && record.totalBytes == 10)
        #expect(record.apply(.uploadProtocol(.tus)) == nil && record.uploadProtocol == .tus)
    }
}
