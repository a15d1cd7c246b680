import AsyncHTTPClient
import FerryCore
import FerryKit
import Foundation
import Logging
import NIOCore

/// A JSON POST of a finished transfer to the URL a session names (`--notify-url`), tried again
/// after a failed attempt (a refused connection, a timeout, any answer but 2xx) with a growing
/// pause: a receiver that is down for a while still hears of it.
struct Webhook: Sendable {
    /// What is posted: what happened, and the transfer as the API shows it.
    struct Payload: Codable, Sendable {
        var event: TransferEvent.Kind
        var transfer: Transfer
    }

    var url: URL
    /// Pauses before the second, third… attempt; the last one's failure is logged and dropped.
    var delays: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16)]
    var timeout: Duration = .seconds(10)

    /// - Returns: whether a 2xx answer came.
    @discardableResult
    func deliver(_ payload: Payload, client: HTTPClient, logger: Logger) async -> Bool {
        guard let body = try? FerryJSON.encoder().encode(payload) else { return false }
        for attempt in 0...delays.count {
            if attempt > 0 {
                guard (try? await Task.sleep(for: delays[attempt - 1])) != nil else { return false }
            }
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "User-Agent", value: "Ferry/\(FerryVersion.current)")
            request.body = .bytes(ByteBuffer(bytes: body))
            do {
                let response = try await client.execute(request, timeout: .init(timeout))
                _ = try? await response.body.collect(upTo: 64 << 10)
                if (200...299).contains(response.status.code) { return true }
                logger.info("webhook refused", metadata: ["webhook.status": "\(response.status.code)", "webhook.attempt": "\(attempt + 1)"])
            } catch {
                logger.info("webhook failed", metadata: ["error": "\(error)", "webhook.attempt": "\(attempt + 1)"])
            }
        }
        logger.warning("webhook given up", metadata: ["webhook.url": "\(url.absoluteString)", "transfer.id": "\(payload.transfer.id)"])
        return false
    }
}
