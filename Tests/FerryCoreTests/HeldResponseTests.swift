import AsyncHTTPClient
import FerryTestSupport
import Foundation
import NIOCore
import Synchronization
import Testing

/// The test servers open the gates they hold responses behind when a test's body ends, however
/// it ends: a test that fails while a response is held fails, instead of hanging in the server's
/// shutdown (which waits for every request it is answering).
@Suite struct HeldResponseTests {
    struct Stop: Error {}

    @Test func anOriginStopsWhenItsTestThrowsWithAResponseHeld() async throws {
        let gate = Origin.Gate()
        let rescued = try await openedOnlyByTheServer(gate) {
            try await Origin.run { origin, base in
                origin.serve("/f", .init(data: Origin.bytes(1_000_000)))
                origin.script("/f", [.holdAfter(100_000, gate)])
                try await withTestHTTPClient { client in
                    let response = try await client.execute(HTTPClientRequest(url: base.appendingPathComponent("f").absoluteString), timeout: .seconds(30))
                    var received = 0
                    for try await part in response.body {
                        received += part.readableBytes
                        if received >= 100_000 { throw Stop() }
                    }
                }
            }
        }
        #expect(!rescued, "the origin's shutdown waited for the held response until the test opened its gate")
    }

    @Test func anUploadReceiverStopsWhenItsTestThrowsWithARequestHeld() async throws {
        let gate = Origin.Gate()
        let rescued = try await openedOnlyByTheServer(gate) {
            try await UploadReceiver.run { receiver, base in
                receiver.holdNextBody(after: 100_000, until: gate)
                try await withTestHTTPClient { client in
                    var request = HTTPClientRequest(url: base.appendingPathComponent("plain/f").absoluteString)
                    request.method = .PUT
                    request.body = .bytes(ByteBuffer(bytes: Origin.bytes(1_000_000)))
                    let upload = Task { try await client.execute(request, timeout: .seconds(30)) }
                    defer { upload.cancel() }
                    try await eventually("the receiver to hold the body") { receiver.bytesReceived >= 100_000 }
                    throw Stop()
                }
            }
        }
        #expect(!rescued, "the receiver's shutdown waited for the held request until the test opened its gate")
    }

    /// Runs `body`, which must throw ``Stop``; if it has not returned after 30 s, opens `gate`
    /// itself so the test ends. Returns whether it had to.
    private func openedOnlyByTheServer(_ gate: Origin.Gate, _ body: @escaping @Sendable () async throws -> Void) async throws -> Bool {
        let rescued = Atomic<Bool>(false)
        let rescue = Task {
            try await Task.sleep(for: .seconds(30))
            rescued.store(true, ordering: .relaxed)
            gate.open()
        }
        defer { rescue.cancel() }
        await #expect(throws: Stop.self) { try await body() }
        return rescued.load(ordering: .relaxed)
    }
}
