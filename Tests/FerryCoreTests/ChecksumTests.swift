import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Files checked against what is expected of them: a checksum given in each algorithm, and the
/// server's own digest headers; a mismatch fails the transfer, names both digests, and places
/// nothing.
@Suite struct ChecksumTests {
    static let data = Origin.bytes(600_000)

    static func get(_ h: EngineHarness, _ url: URL, checksum: String?, folder: URL? = nil) async throws -> Transfer {
        try await h.engine.enqueue(
            .init(urls: [url], session: "test", directory: folder?.path, outputName: folder == nil ? nil : "f.bin",
                  checksum: try checksum.map { try Checksum(parsing: $0) })
        )[0]
    }

    @Test(arguments: Checksum.Algorithm.allCases)
    func aMatchingChecksumIsRecorded(algorithm: Checksum.Algorithm) async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Self.data))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    // Upper-case hex is taken too.
                    let given = "\(algorithm.rawValue)=\(Digests.hex(Self.data, algorithm).uppercased())"
                    let t = try await Self.get(h, base.appendingPathComponent("f"), checksum: given)
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.verifiedBy == ["checksum \(algorithm.rawValue)"])
                    #expect(done.checksum?.hex == Digests.hex(Self.data, algorithm))
                }
            }
        }
    }

    /// A wrong checksum fails the transfer with both digests in its message; nothing is placed
    /// under the name, and the bytes start over when it is resumed.
    @Test(arguments: Checksum.Algorithm.allCases)
    func aWrongChecksumFailsAndPlacesNothing(algorithm: Checksum.Algorithm) async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Self.data))
            try await withTemporaryDirectory { home in
                let out = home.appendingPathComponent("out")
                try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    let wrong = Digests.hex(Origin.bytes(10), algorithm)
                    let t = try await Self.get(h, base.appendingPathComponent("f"), checksum: "\(algorithm.rawValue)=\(wrong)", folder: out)
                    let failed = try await h.wait(t.id, for: .failed)
                    #expect(failed.error?.code == "checksum_mismatch")
                    #expect(failed.error?.message.contains(wrong) == true)
                    #expect(failed.error?.message.contains(Digests.hex(Self.data, algorithm)) == true, "\(failed.error?.message ?? "")")
                    #expect(failed.path == nil && failed.bytesReceived == 0)
                    #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("f.bin").path))
                }
            }
        }
    }

    /// Every header a server may state the whole file's digest in, matching and not.
    @Test(arguments: [
        ("Repr-Digest", "sha-256=:\(Digests.base64(ChecksumTests.data, .sha256)):", "Repr-Digest sha-256"),
        ("Repr-Digest", "sha-512=:\(Digests.base64(ChecksumTests.data, .sha512)):, unixsum=:AAAA:", "Repr-Digest sha-512"),
        ("Content-Digest", "sha-256=:\(Digests.base64(ChecksumTests.data, .sha256)):", "Content-Digest sha-256"),
        ("Digest", "MD5=\(Digests.base64(ChecksumTests.data, .md5)), SHA=\(Digests.base64(ChecksumTests.data, .sha1))", "Digest sha-1"),
        ("Digest", "SHA-256=\(Digests.base64(ChecksumTests.data, .sha256))", "Digest sha-256"),
    ])
    func aServersDigestHeaderIsChecked(header: String, value: String, recorded: String) async throws {
        try await Origin.run { origin, base in
            var file = Origin.File(data: Self.data)
            file.extraHeaders = [header: value]
            origin.serve("/good", file)
            // The same header with another file's digest.
            var liar = Origin.File(data: Origin.bytes(600_000, seed: 5))
            liar.extraHeaders = [header: value]
            origin.serve("/bad", liar)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    let good = try await Self.get(h, base.appendingPathComponent("good"), checksum: nil)
                    #expect(try await h.wait(good.id, for: .completed).verifiedBy == [recorded])
                    let bad = try await Self.get(h, base.appendingPathComponent("bad"), checksum: nil)
                    let failed = try await h.wait(bad.id, for: .failed)
                    #expect(failed.error?.code == "checksum_mismatch")
                    #expect(failed.error?.message.contains("\(header) header") == true, "\(failed.error?.message ?? "")")
                }
            }
        }
    }

    /// A digest stated by the first response still counts after a pause and a ranged resume.
    @Test func aServersDigestIsKeptAcrossAResume() async throws {
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            var file = Origin.File(data: Self.data)
            file.extraHeaders = ["Repr-Digest": "sha-256=:\(Digests.base64(Self.data, .sha256)):"]
            origin.serve("/f", file)
            origin.script("/f", [.holdAfter(200_000, gate)])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home, configuration: .fast) { h in
                    let t = try await Self.get(h, base.appendingPathComponent("f"), checksum: nil)
                    try await h.wait(t.id, bytes: 200_000)
                    _ = try await h.engine.pause(t.id)
                    gate.open()
                    _ = try await h.engine.resume(t.id)
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.verifiedBy == ["Repr-Digest sha-256"])
                    #expect(origin.requests(for: "/f").last?.range == "bytes=200000-")
                }
            }
        }
    }

    @Test(arguments: ["sha-256", "sha-256=12", "crc32=00000000", "sha-1=" + String(repeating: "z", count: 40), "=abc"])
    func malformedChecksumsAreRefused(text: String) {
        #expect(throws: FerryError.self) { try Checksum(parsing: text) }
    }

    @Test func digestHeadersArePicked() {
        let sha = Digests.base64(Self.data, .sha256)
        // Content-Digest covers this response's content: not the file on a 206 or when encoded.
        #expect(DigestHeaders.checksum(reprDigest: nil, contentDigest: "sha-256=:\(sha):", digest: nil, status: 206, contentEncoding: nil) == nil)
        #expect(DigestHeaders.checksum(reprDigest: nil, contentDigest: "sha-256=:\(sha):", digest: nil, status: 200, contentEncoding: "gzip") == nil)
        // A digest of the wrong length, or an unknown algorithm, is not used.
        #expect(DigestHeaders.checksum(reprDigest: "sha-256=:AAAA:, crc32c=:AAAA:", contentDigest: nil, digest: nil, status: 200, contentEncoding: nil) == nil)
        let picked = DigestHeaders.checksum(reprDigest: "sha-512=:\(Digests.base64(Self.data, .sha512)):, sha-256=:\(sha):", contentDigest: nil, digest: nil, status: 206, contentEncoding: nil)
        #expect(picked?.checksum.algorithm == .sha256 && picked?.header == "Repr-Digest")
    }
}
