import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// HTTP/2 where the server offers it: many downloads from one host are streams of one
/// connection (no handshake each), and each transfer says which version it came over.
@Suite struct HTTPVersionTests {
    @Test func manySmallFilesFromAnHTTP2HostShareOneConnection() async throws {
        let files = (0..<200).map { Origin.File(data: Origin.bytes(16_384 + $0, seed: UInt64($0))) }
        try await Origin.run(http2: true) { origin, base in
            for (n, file) in files.enumerated() { origin.serve("/s/\(n)", file) }
            try await withTemporaryDirectory { home in
                try await withTestHTTPClient(trustTestCertificate: true) { client in
                    var configuration = TransferEngine.Configuration.fast
                    configuration.maxConcurrent = 16
                    try await EngineHarness.run(home: home, configuration: configuration, httpClient: client) { h in
                        let transfers = try await h.get(files.indices.map { base.appendingPathComponent("s/\($0)") })
                        for (t, file) in zip(transfers, files) {
                            let done = try await h.wait(t.id, for: .completed)
                            #expect(done.sha256 == file.sha256 && done.httpVersion == "HTTP/2", "\(done)")
                        }
                        #expect(origin.requests.count == 200 && origin.requests.allSatisfy(\.http2))
                        let connections = Set(origin.requests.map(\.connection))
                        #expect(connections.count == 1, "200 downloads, \(connections.count) connections")
                    }
                }
            }
        }
    }

    /// A large file's bytes come over HTTP/1.1 even from an HTTP/2 server: its framing cost
    /// twice the CPU a byte (see ``TransferWorker/prefersHTTP1(_:)``). The first answer, over
    /// HTTP/2, is dropped once its length is known.
    @Test func aLargeFileFromAnHTTP2HostComesOverHTTP11() async throws {
        let file = Origin.File(data: Origin.bytes(24 << 20, seed: 3))
        try await Origin.run(http2: true) { origin, base in
            origin.serve("/big", file)
            try await withTemporaryDirectory { home in
                do {
                    try await EngineHarness.run(home: home) { h in
                        // Trusted as a user trusts a server of their own: both clients take it.
                        let trust = TransferOptions(caCertificate: Origin.certificatesFolder().appendingPathComponent("localhost.crt").path)
                        let t = try await h.engine.enqueue(.init(urls: [base.appendingPathComponent("big")], session: "test", options: trust))[0]
                        let done = try await h.wait(t.id, for: .completed)
                        #expect(done.sha256 == file.sha256 && done.httpVersion == "HTTP/1.1", "\(done)")
                        let requests = origin.requests(for: "/big")
                        #expect(requests.first?.http2 == true, "asked over HTTP/2 first")
                        #expect(requests.count >= 2 && requests.dropFirst().allSatisfy { !$0.http2 }, "\(requests.map(\.http2))")
                        let sent = origin.bytesSentPerRequest("/big").first ?? 0
                        #expect(sent < file.data.count / 2, "the HTTP/2 answer was dropped early: \(sent) bytes")
                    }
                }
            }
        }
    }

    @Test func aPlainServerIsHTTP11() async throws {
        let file = Origin.File(data: Origin.bytes(10_000))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let done = try await h.wait(try await h.get(base.appendingPathComponent("f")).id, for: .completed)
                    #expect(done.httpVersion == "HTTP/1.1")
                    let listed = try await h.engine.transfer(done.id)
                    #expect(listed.httpVersion == "HTTP/1.1", "journaled, read back")
                }
            }
        }
    }
}
