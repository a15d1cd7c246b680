import FerryKit
import Foundation
import Testing

@testable import FerryServer

/// The hand-written list encoder must write exactly what JSONEncoder writes: scripts and
/// FerryKit read both.
@Suite struct TransferListJSONTests {
    static let created = Date(timeIntervalSince1970: 1_763_800_000.75)

    /// Every field set, with text that needs escaping.
    static let full = Transfer(
        id: 42, url: "https://example.com/a b/\"quoted\"?x=1&y=é", session: "s/1", state: .running,
        bytesReceived: 1_234_567, totalBytes: 9_876_543_210, path: "/lib/Downloads/a\\b\n.mp3",
        sha256: String(repeating: "ab", count: 32), error: TransferErrorInfo(code: "http_status", message: "Tab\there, bell\u{7}, NUL\u{0}, 🎧"),
        waitReason: "cannot resolve \"ex\u{1}ample\".com",
        folder: "Podcasts/Ünïcode \u{1F}", taskDescription: "desc\r\n\u{8}\u{C}", bytesPerSecond: 1_048_576.5, etaSeconds: 12,
        attempts: 3, retryAt: created.addingTimeInterval(59.999), createdAt: created, updatedAt: created.addingTimeInterval(3600.2),
        completedAt: Date(timeIntervalSince1970: 0), kind: .upload, method: "PUT", sourcePath: "/tmp/x.bin",
        uploadProtocol: .tus,
        response: UploadResponse(status: 201, headers: ["Location": "/files/1", "Tus-Resumable": "1.0.0"], body: "ok", bodyTruncated: false),
        startAfter: Date(timeIntervalSince1970: 4_102_444_800), options: TransferOptions(headers: ["Authorization": "[redacted]"], bytesPerSecond: 1000),
        connections: 8, ranges: [TransferRange(start: 0, end: 100, bytes: 100), TransferRange(start: 100, end: 9_876_543_210, bytes: 7)],
        mirrors: [TransferMirror(url: "https://b.example/\"x\"", dropped: "answered 404 Not Found"), TransferMirror(url: "https://c.example/x")],
        directory: "/home/ann/isos \"new\"", checksum: try! Checksum(parsing: "sha-256=" + String(repeating: "AB", count: 32)),
        verifiedBy: ["checksum sha-256", "Repr-Digest sha-256"], priority: .high, fileMissing: true, member: "host-a \"1\"", requestedBy: "ann \"2\"", httpVersion: "HTTP/2"
    )

    /// Only what is always there.
    static let bare = Transfer(id: 1, url: "http://127.0.0.1/f", session: "default", state: .queued, createdAt: created, updatedAt: created)

    @Test(arguments: [
        [Self.full], [Self.bare], [Self.bare, Self.full, Self.bare], [],
        [Transfer(id: 7, url: "u", session: "s", state: .running, bytesPerSecond: 0.1, etaSeconds: 1e21, createdAt: created, updatedAt: created)],
    ])
    func matchesJSONEncoder(_ transfers: [Transfer]) throws {
        let list = TransferList(transfers: transfers, lastEventSeq: 99)
        let expected = String(decoding: try FerryJSON.encoder().encode(list), as: UTF8.self)
        let buffer = try TransferListJSON.encode(list)
        let written = String(buffer: buffer)
        #expect(written == expected)
    }

    /// The sample above sets every field, so a field added to Transfer but not to the writer
    /// shows up as a missing key here.
    @Test func theFullSampleSetsEveryField() throws {
        let object = try JSONSerialization.jsonObject(with: try FerryJSON.encoder().encode(Self.full)) as? [String: Any]
        let nulls = object?.filter { $0.value is NSNull }.map(\.key) ?? ["?"]
        #expect(nulls.isEmpty)
        #expect(object?.count == Mirror(reflecting: Self.full).children.count)
    }
}
