import FerryCore
import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

/// A Metalink given to the daemon (`POST /v1/transfers` with `metalink`, and aria2's
/// `addMetalink`): a transfer for each file, from its mirrors, checked against its digest, put
/// where its name says inside the download folder; a document Ferry cannot use queues nothing.
@Suite struct MetalinkAPITests {
    static func document(_ files: [(name: String, sha256: String, urls: [String])]) -> String {
        let body = files.map { file in
            #"<file name="\#(file.name)"><hash type="sha-256">\#(file.sha256)</hash>"#
                + file.urls.enumerated().map { #"<url priority="\#($0.offset + 1)">\#($0.element)</url>"# }.joined() + "</file>"
        }.joined()
        return #"<?xml version="1.0" encoding="UTF-8"?><metalink xmlns="urn:ietf:params:xml:ns:metalink">\#(body)</metalink>"#
    }

    static func reach(_ d: DaemonHarness, _ id: Int64, _ state: TransferState) async throws -> Transfer {
        try await eventually("transfer \(id) \(state)") { try await d.client.transfer(id).state == state }
        return try await d.client.transfer(id)
    }

    @Test func eachFileComesFromItsMirrorsCheckedAgainstItsDigest() async throws {
        try await Origin.run { origin, base in
            let a = Origin.File(data: Origin.bytes(1_500_000, seed: 11)), b = Origin.File(data: Origin.bytes(70_000, seed: 12))
            origin.serve("/good/a.bin", a)
            origin.serve("/b.bin", b)
            let url = { @Sendable (path: String) in base.appendingPathComponent(path).absoluteString }
            // A's first URL answers 404 and its ftp one is not Ferry's: the good mirror gives it.
            let metalink = Self.document([
                ("a.bin", a.sha256, [url("missing/a.bin"), "ftp://127.0.0.1:1/a.bin", url("good/a.bin")]),
                ("sub/b.bin", b.sha256, [url("b.bin")]),
            ])
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let created = try await d.client.createTransfers(CreateTransfersRequest(metalink: metalink))
                    #expect(created.transfers.count == 2)
                    #expect(created.transfers[0].url == url("missing/a.bin") && created.transfers[0].mirrors?.map(\.url) == [url("good/a.bin")])
                    #expect(created.transfers.map { $0.checksum?.hex } == [a.sha256, b.sha256])
                    var done: [Transfer] = []
                    for transfer in created.transfers { done.append(try await Self.reach(d, transfer.id, .completed)) }
                    #expect(done.map(\.sha256) == [a.sha256, b.sha256])
                    #expect(done.allSatisfy { $0.verifiedBy == ["checksum sha-256"] }, "\(done.map(\.verifiedBy))")
                    let downloads = home.appendingPathComponent("library/Downloads")
                    #expect(done[0].path == downloads.appendingPathComponent("a.bin").path)
                    #expect(done[1].path == downloads.appendingPathComponent("sub/b.bin").path, "the name's folder, inside Downloads")
                    #expect(try Data(contentsOf: downloads.appendingPathComponent("sub/b.bin")).sha256Hex == b.sha256)
                    #expect(!origin.requests(for: "/missing/a.bin").isEmpty && !origin.requests(for: "/good/a.bin").isEmpty)
                }
            }
        }
    }

    @Test func aMetalinksURLIsFetchedByTheDaemon() async throws {
        try await Origin.run { origin, base in
            let file = Origin.File(data: Origin.bytes(60_000, seed: 16))
            origin.serve("/d.bin", file)
            let document = Self.document([("d.bin", file.sha256, [base.appendingPathComponent("d.bin").absoluteString])])
            origin.serve("/files.meta4", Origin.File(data: Data(document.utf8), contentType: "application/metalink4+xml"))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let created = try await d.client.createTransfers(CreateTransfersRequest(metalinkURL: base.appendingPathComponent("files.meta4").absoluteString))
                    #expect(created.transfers.map(\.url) == [base.appendingPathComponent("d.bin").absoluteString])
                    #expect(try await Self.reach(d, created.transfers[0].id, .completed).sha256 == file.sha256)
                    do {
                        _ = try await d.client.createTransfers(CreateTransfersRequest(metalinkURL: base.appendingPathComponent("gone.meta4").absoluteString))
                        Issue.record("a Metalink that is not there queued something")
                    } catch let error as FerryError {
                        #expect(error.code == .httpStatus && error.message.contains("404"), "\(error)")
                    }
                    #expect(try await d.client.transfers().transfers.count == 1)
                }
            }
        }
    }

    @Test func aDigestThatDoesNotMatchPlacesNothing() async throws {
        try await Origin.run { origin, base in
            origin.serve("/c.bin", Origin.File(data: Origin.bytes(50_000, seed: 13)))
            let wrong = String(repeating: "0", count: 64)
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let metalink = Self.document([("c.bin", wrong, [base.appendingPathComponent("c.bin").absoluteString])])
                    let created = try await d.client.createTransfers(CreateTransfersRequest(metalink: metalink))
                    let failed = try await Self.reach(d, created.transfers[0].id, .failed)
                    #expect(failed.error?.code == FerryError.Code.checksumMismatch.rawValue, "\(String(describing: failed.error))")
                    let downloads = home.appendingPathComponent("library/Downloads").path
                    #expect((try? FileManager.default.contentsOfDirectory(atPath: downloads))?.contains("c.bin") != true)
                }
            }
        }
    }

    @Test func aDocumentFerryCannotUseQueuesNothing() async throws {
        try await Origin.run { origin, base in
            let good = base.appendingPathComponent("x.bin").absoluteString
            let sha = String(repeating: "ab", count: 32)
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let cases: [(CreateTransfersRequest, FerryError.Code, String)] = [
                        (CreateTransfersRequest(metalink: Self.document([("../../.bashrc", sha, [good])])), .metalinkInvalid, "leaves the download folder"),
                        (CreateTransfersRequest(metalink: Self.document([("ok.bin", sha, [good]), ("ftp.bin", sha, ["ftp://127.0.0.1:1/f"])])), .metalinkInvalid, "no http or https URL for ftp.bin"),
                        (CreateTransfersRequest(metalink: "<html><body>not found</body></html>"), .metalinkInvalid, "root element is <html>"),
                        (CreateTransfersRequest(urls: [good], metalink: Self.document([("ok.bin", sha, [good])])), .invalidRequest, "without urls"),
                        (CreateTransfersRequest(checksum: "sha-256=\(sha)", metalink: Self.document([("ok.bin", sha, [good])])), .invalidRequest, "without urls"),
                    ]
                    for (request, code, reason) in cases {
                        do {
                            _ = try await d.client.createTransfers(request)
                            Issue.record("\(reason): queued")
                        } catch let error as FerryError {
                            #expect(error.code == code && error.message.contains(reason), "\(reason): \(error)")
                        }
                    }
                    #expect(try await d.client.transfers().transfers.isEmpty, "nothing queued")
                    #expect(origin.requests.isEmpty)
                }
            }
        }
    }

    @Test func aria2sAddMetalinkGivesAGIDForEachFile() async throws {
        try await Aria2RPCTests.withRPC { d, rpc, origin, base in
            let a = Origin.File(data: Origin.bytes(40_000, seed: 14)), b = Origin.File(data: Origin.bytes(30_000, seed: 15))
            origin.serve("/a.bin", a)
            origin.serve("/b.bin", b)
            let metalink = Self.document([
                ("a.bin", a.sha256, [base.appendingPathComponent("a.bin").absoluteString]),
                ("b.bin", b.sha256, [base.appendingPathComponent("b.bin").absoluteString]),
            ])
            let gids = try #require(try await rpc.call("aria2.addMetalink", Data(metalink.utf8).base64EncodedString(), [String: String]()) as? [String])
            #expect(gids.count == 2 && Set(gids).count == 2)
            for gid in gids { try await eventually("complete") { try await rpc.status(gid)["status"] as? String == "complete" } }
            #expect(try await rpc.status(gids[1])["totalLength"] as? String == "30000")
            let message = try await rpc.error("aria2.addMetalink", "not base64!")["message"] as? String
            #expect(message?.contains("base64") == true, "\(String(describing: message))")
            let traversal = Data(Self.document([("../x", a.sha256, [base.appendingPathComponent("a.bin").absoluteString])]).utf8).base64EncodedString()
            #expect((try await rpc.error("aria2.addMetalink", traversal)["message"] as? String)?.contains("leaves the download folder") == true)
            #expect(try await d.client.transfers().transfers.count == 2)
        }
    }
}
