import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Downloads with mirrors, each mirror a test origin of its own: ranges from all of them, a
/// mirror that 404s or whose copy differs dropped while the download goes on, the URL itself
/// failing over to a mirror, and every source failing.
@Suite struct MirrorTests {
    static var configuration: TransferEngine.Configuration { SegmentedDownloadTests.configuration }

    /// Two origins: the transfer's own and a mirror.
    static func withTwoOrigins<T: Sendable>(_ body: (Origin, URL, Origin, URL) async throws -> T) async throws -> T {
        try await Origin.run { origin, base in
            try await Origin.run { mirror, mirrorBase in try await body(origin, base, mirror, mirrorBase) }
        }
    }

    static func get(_ h: EngineHarness, _ url: URL, mirrors: [URL], connections: Int? = nil) async throws -> Transfer {
        try await h.engine.enqueue(
            .init(urls: [url], session: "test", options: connections.map { TransferOptions(connections: $0) }, mirrors: mirrors)
        )[0]
    }

    @Test func rangesComeFromEveryMirror() async throws {
        let file = Origin.File(data: Origin.bytes(3_000_000), bytesPerSecond: 600_000)
        try await Self.withTwoOrigins { origin, base, mirror, mirrorBase in
            origin.serve("/f", file)
            mirror.serve("/copy", file)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: Self.configuration) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), mirrors: [mirrorBase.appendingPathComponent("copy")], connections: 4)
                    #expect(t.mirrors == [TransferMirror(url: mirrorBase.appendingPathComponent("copy").absoluteString)])
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    let fromMirror = mirror.requests(for: "/copy")
                    #expect(fromMirror.count >= 1, "the mirror served ranges")
                    #expect(fromMirror.allSatisfy { $0.range != nil && $0.ifRange == "\"v1\"" })
                    #expect(mirror.bytesSent("/copy") > 0 && origin.bytesSent("/f") > 0)
                    #expect(try await h.events().contains { $0.kind == .mirrorDropped } == false)
                }
            }
        }
    }

    /// Metalink/HTTP (RFC 6249): the mirrors a server names in `Link: …; rel=duplicate` join the
    /// download at once and are kept with it; none are taken when the transfer sends credentials,
    /// which must not reach another server.
    @Test func aServersDuplicateLinksBecomeMirrors() async throws {
        try await Self.withTwoOrigins { origin, base, mirror, mirrorBase in
            var file = Origin.File(data: Origin.bytes(3_000_000), bytesPerSecond: 600_000)
            let copy = mirrorBase.appendingPathComponent("copy").absoluteString
            file.extraHeaders = ["Link": "<\(copy)>; rel=duplicate; pri=1; geo=de, <ftp://127.0.0.1/f>; rel=duplicate, <\(copy).torrent>; rel=describedby"]
            origin.serve("/f", file)
            origin.serve("/private", file)
            mirror.serve("/copy", Origin.File(data: file.data, bytesPerSecond: 600_000))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: Self.configuration) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), mirrors: [], connections: 4)
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(done.mirrors == [TransferMirror(url: copy)], "only the http(s) duplicate")
                    #expect(mirror.requests(for: "/copy").allSatisfy { $0.range != nil } && mirror.bytesSent("/copy") > 0)

                    let before = mirror.requests(for: "/copy").count
                    var options = TransferOptions(connections: 4)
                    options.user = "alice"
                    options.password = "secret"
                    let withLogin = try await h.engine.enqueue(.init(urls: [base.appendingPathComponent("private")], session: "test", options: options))[0]
                    let privately = try await h.wait(withLogin.id, for: .completed)
                    #expect(privately.mirrors == nil && mirror.requests(for: "/copy").count == before, "credentials stay with the URL's server")
                }
            }
        }
    }

    @Test func duplicateLinksAreReadAsRFC8288WritesThem() {
        let base = URL(string: "https://origin.example/files/a.iso")!
        let links = LinkDuplicates.parse([
            #"<https://m2.example/a.iso>; rel="duplicate"; pri=2, <//m1.example/a.iso>; rel=duplicate; pri=1; geo="FR""#,
            #"<../mirror/a.iso>; rel="duplicate", <https://m1.example/a.iso>; rel=duplicate"#,
            #"<https://x.example/a.meta4>; rel=describedby; type="application/metalink4+xml", <mailto:a@b>; rel=duplicate"#,
            "<https://broken.example/a.iso; rel=duplicate",
        ], base: base)
        #expect(links.map(\.url.absoluteString) == ["https://m1.example/a.iso", "https://m2.example/a.iso", "https://origin.example/mirror/a.iso"])
        #expect(links.first?.geo == "fr" && links.first?.priority == 1)

        var record = TransferRecord(session: "s", url: base.absoluteString, folder: "Downloads")
        record.mirrorList = [TransferMirror(url: "https://m2.example/a.iso", dropped: "answered 404 Not Found")]
        let header = ["<https://m2.example/a.iso>; rel=duplicate, <http://plain.example/a.iso>; rel=duplicate, <https://m3.example/a.iso>; rel=duplicate"]
        let offered = TransferWorker.offeredMirrors(header, answer: base, record: record, options: TransferOptions())
        #expect(offered.map(\.absoluteString) == ["https://m3.example/a.iso"], "not a dropped one again, not plain HTTP for an https URL")
        #expect(TransferWorker.offeredMirrors(header, answer: base, record: record, options: TransferOptions(headers: ["X-Api-Key": "k"])).isEmpty)
    }

    /// A mirror without the file is dropped for good, with the reason, and the rest comes from
    /// the URL.
    @Test func aMirrorThatAnswers404IsDropped() async throws {
        let file = Origin.File(data: Origin.bytes(3_000_000), bytesPerSecond: 600_000)
        try await Self.withTwoOrigins { origin, base, mirror, mirrorBase in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: Self.configuration) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), mirrors: [mirrorBase.appendingPathComponent("gone")], connections: 4)
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(!mirror.requests(for: "/gone").isEmpty)
                    #expect(done.mirrors?.first?.dropped == "answered 404 Not Found")
                    let note = try await h.events().first { $0.kind == .mirrorDropped }
                    #expect(note?.reason?.contains("/gone answered 404") == true, "\(String(describing: note?.reason))")
                }
            }
        }
    }

    /// A mirror whose copy differs (the same ETag and another length, or another ETag) is
    /// dropped; no byte of it is kept and the download does not start over.
    @Test(arguments: [
        Origin.File(data: Origin.bytes(3_100_000), bytesPerSecond: 600_000),
        Origin.File(data: Origin.bytes(3_000_000, seed: 7), etag: "\"other\"", bytesPerSecond: 600_000),
    ])
    func aMirrorWhoseCopyDiffersIsDropped(copy: Origin.File) async throws {
        let file = Origin.File(data: Origin.bytes(3_000_000), bytesPerSecond: 600_000)
        try await Self.withTwoOrigins { origin, base, mirror, mirrorBase in
            origin.serve("/f", file)
            mirror.serve("/f", copy)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: Self.configuration) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), mirrors: [mirrorBase.appendingPathComponent("f")], connections: 4)
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(done.mirrors?.first?.dropped?.contains("its copy differs") == true, "\(String(describing: done.mirrors))")
                    #expect(!mirror.requests(for: "/f").isEmpty)
                    #expect(!(try await h.events()).contains { $0.kind == .restarted }, "the URL's file did not change")
                }
            }
        }
    }

    /// The URL answering 404 is left out of the attempt (not dropped for good: it is the
    /// transfer's own), and the whole file comes from the mirror.
    @Test func theURLFailingFallsBackToAMirror() async throws {
        let file = Origin.File(data: Origin.bytes(1_000_000))
        try await Self.withTwoOrigins { origin, base, mirror, mirrorBase in
            mirror.serve("/f", file)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: Self.configuration) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), mirrors: [mirrorBase.appendingPathComponent("f")])
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(done.mirrors?.first?.dropped == nil)
                    let note = try await h.events().first { $0.kind == .mirrorDropped }
                    #expect(note?.reason?.hasSuffix("left out of this attempt") == true, "\(String(describing: note?.reason))")
                    #expect(origin.requests(for: "/f").count == 1)
                }
            }
        }
    }

    /// When every source fails for good, the transfer fails with a clear error; a mirror that
    /// refuses connections is waited for, not dropped for good.
    @Test func everySourceMissingFailsTheTransfer() async throws {
        try await Self.withTwoOrigins { _, base, _, mirrorBase in
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: Self.configuration) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), mirrors: [mirrorBase.appendingPathComponent("f")])
                    let failed = try await h.wait(t.id, for: .failed)
                    #expect(failed.error?.code == "http_status")
                    #expect(failed.mirrors?.first?.dropped == "answered 404 Not Found")
                }
            }
        }
    }

    @Test func aMirrorThatRefusesConnectionsIsWaitedFor() async throws {
        let file = Origin.File(data: Origin.bytes(1_000_000))
        let refusing = try RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let refused = URL(string: "http://127.0.0.1:\(refusing.port)/f")!
        try await Origin.run { origin, base in
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: Self.configuration) { h in
                    // The URL has no file yet and the mirror refuses: the transfer waits.
                    let t = try await Self.get(h, base.appendingPathComponent("f"), mirrors: [refused])
                    let waiting = try await h.wait(t.id, for: .waiting)
                    #expect(waiting.mirrors?.first?.dropped == nil)
                    origin.serve("/f", file)
                    #expect(try await h.wait(t.id, for: .completed).sha256 == file.sha256)
                }
            }
        }
    }

    @Test func mirrorsAreCheckedAtCreation() async throws {
        try await withTemporaryDirectory { home in
            try await EngineHarness.run(home: home, configuration: Self.configuration) { h in
                let a = URL(string: "http://127.0.0.1:9/a")!
                let b = URL(string: "http://127.0.0.1:9/b")!
                await #expect(throws: FerryError.self) {
                    try await h.engine.enqueue(.init(urls: [a, b], session: "test", mirrors: [a]))
                }
                await #expect(throws: FerryError.self) {
                    try await h.engine.enqueue(.init(urls: [a], session: "test", mirrors: Array(repeating: b, count: 17)))
                }
                // The URL itself and repeats are not mirrors of it.
                let t = try await h.engine.enqueue(.init(urls: [a], session: "test", options: .init(startAfter: .distantFuture), mirrors: [a, b, b]))[0]
                #expect(t.mirrors == [TransferMirror(url: b.absoluteString)])
                #expect(try await h.journal.transfers().count == 1)
            }
        }
    }
}
