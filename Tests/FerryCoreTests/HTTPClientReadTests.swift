import AsyncHTTPClient
import FerryCore
import FerryTestSupport
import Foundation
import NIOCore
import Testing

/// The daemon's HTTP client reads a connection in buffers of up to
/// ``TransferEngine/connectionReadSize``, not NIO's 64 KiB
/// (bench/reports/2026-11-large-download.md, "Reads of up to 256 KiB").
@Suite struct HTTPClientReadTests {
    // Over plain HTTP: through TLS the body comes in parts larger than 64 KiB with or without
    // this (NIOSSL gathers what it decrypts), so a TLS case would pass either way.
    @Test func aBodyArrivesInReadsLargerThanNIOsDefault() async throws {
        let file = Origin.File(data: Origin.bytes(8 << 20, seed: 9))
        try await Origin.run { origin, base in
            origin.serve("/big", file)
            try await withTestHTTPClient { client in
                let response = try await client.execute(HTTPClientRequest(url: base.appendingPathComponent("big").absoluteString), timeout: .seconds(30))
                var largest = 0
                var received = Data()
                for try await part in response.body {
                    largest = max(largest, part.readableBytes)
                    received.append(contentsOf: part.readableBytesView)
                    // A slow consumer at first, so that the socket holds more than a read takes
                    // and each read fills its buffer, which then grows.
                    if largest <= 64 * 1024 { try await Task.sleep(for: .milliseconds(10)) }
                }
                #expect(received == file.data)
                #expect(largest > 64 * 1024, "NIO's default reads are at most 64 KiB")
                #expect(largest <= TransferEngine.connectionReadSize)
            }
        }
    }
}
