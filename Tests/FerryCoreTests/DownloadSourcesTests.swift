import FerryKit
import Foundation
import Testing

@testable import FerryCore

/// How a download's sources judge failures, without I/O.
@Suite struct DownloadSourcesTests {
    static let own = URL(string: "http://a.test/f")!
    static let mirror = URL(string: "http://b.test/f")!
    static let notFound = HTTPStatusFailure(status: 404, reason: "Not Found", url: mirror)
    static let busy = HTTPStatusFailure(status: 503, reason: "Service Unavailable", url: mirror)
    static let refused = FerryError(.connectionFailed, "refused")

    @Test func aMirrorWithoutTheFileIsDroppedForGood() {
        var sources = DownloadSources(reference: Self.own, mirrors: [Self.mirror], own: Self.own)
        #expect(sources.failed(1, error: Self.notFound, limit: 4) == .drop(reason: "answered 404 Not Found", forGood: true))
        #expect(sources.live == [0])
    }

    /// The transfer's own URL is never dropped for good; alone, its failure fails the attempt.
    @Test func theOwnURLIsLeftOutOfTheAttemptOnly() {
        var sources = DownloadSources(reference: Self.own, mirrors: [Self.mirror], own: Self.own)
        #expect(sources.failed(0, error: Self.notFound, limit: 4) == .drop(reason: "answered 404 Not Found", forGood: false))
        #expect(sources.failed(1, error: Self.notFound, limit: 4) == .fail)
    }

    /// The reference's file changing starts over; a mirror's other copy drops the mirror.
    @Test func aChangedFileRestartsOnlyFromTheReference() {
        var sources = DownloadSources(reference: Self.own, mirrors: [Self.mirror], own: Self.own)
        let changed = FileChanged(reason: "the validator changed")
        #expect(sources.failed(1, error: changed, limit: 4) == .drop(reason: "its copy differs: the validator changed", forGood: true))
        #expect(sources.failed(0, error: changed, limit: 4) == .restart(reason: "the validator changed"))
    }

    /// Failures that waiting can mend count in a row, reset by bytes from the source; at the
    /// limit the source is left out while another remains, else the attempt fails.
    @Test func mendableFailuresCountInARow() {
        var sources = DownloadSources(reference: Self.own, mirrors: [Self.mirror], own: Self.own)
        #expect(sources.failed(1, error: Self.busy, limit: 3) == .retry)
        #expect(sources.failed(1, error: Self.refused, limit: 3) == .retry)
        sources.received(10, from: 1)
        #expect(sources.failed(1, error: Self.refused, limit: 3) == .retry)
        #expect(sources.failures(1) == 1)
        #expect(sources.failed(1, error: Self.refused, limit: 3) == .retry)
        guard case .drop(_, forGood: false) = sources.failed(1, error: Self.refused, limit: 3) else {
            Issue.record("three in a row did not drop it")
            return
        }
        #expect(sources.live == [0])
        #expect(sources.failed(0, error: Self.refused, limit: 1) == .fail)
    }

    /// When the URL failed first, a mirror is the reference: its change starts over, and the
    /// hosts are the sources' own.
    @Test func aMirrorCanBeTheReference() {
        var sources = DownloadSources(reference: Self.mirror, mirrors: [], own: Self.own)
        #expect(sources.all.map(\.host) == ["b.test"])
        #expect(sources.all[0].isMirror)
        #expect(sources.failed(0, error: FileChanged(reason: "x"), limit: 4) == .restart(reason: "x"))
    }
}
