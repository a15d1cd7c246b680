import AsyncHTTPClient
import FerryKit
import Foundation
import Logging
import NIOCore

extension CatalogClient {
    /// More than a 200-result answer could ever need; anything larger is not Apple's.
    static let maxBodyBytes = 8 * 1024 * 1024

    /// A request's answer: from the cache, else from the request already in flight for the same
    /// key, else from a new call. Errors of any kind come out as `FerryError`.
    func perform(_ request: CatalogRequest) async throws -> [CatalogItem] {
        if let items = cache.items(for: request.key, now: time.now) {
            logger.debug("catalog cache hit", metadata: ["catalog.request": "\(request.key)"])
            return items
        }
        do {
            return try await flights.value(for: request.key) { [self] in
                let items = try await fetch(request)
                cache.store(items, for: request.key, now: time.now)
                return items
            }
        } catch {
            throw CatalogFailure.error(from: error, source: baseURL.absoluteString)
        }
    }

    /// One call to the catalog, after waiting for the rate limit.
    private func fetch(_ request: CatalogRequest) async throws -> [CatalogItem] {
        try await pace()
        let url = request.url(base: baseURL)
        let source = baseURL.absoluteString
        var outgoing = HTTPClientRequest(url: url)
        outgoing.headers.add(name: "User-Agent", value: userAgent)
        outgoing.headers.add(name: "Accept", value: "application/json, text/javascript")
        outgoing.headers.add(name: "Accept-Encoding", value: "identity")
        logger.debug("catalog request", metadata: ["catalog.url": "\(url)"])

        // Real time, not the injected clock: this bounds the network, like the client's own
        // timeouts. The HTTP client's deadline ends when the head arrives, so the body has its own.
        let deadline = ContinuousClock.now + requestTimeout
        let response = try await http.execute(outgoing, timeout: TimeAmount(requestTimeout), logger: logger)
        let body: NIOCore.ByteBuffer
        do {
            body = try await Self.before(deadline) { try await response.body.collect(upTo: Self.maxBodyBytes) }
        } catch is NIOTooManyBytesError {
            throw FerryError(
                .catalogBadResponse, "The catalog at \(source) sent more than \(Self.maxBodyBytes / 1024 / 1024) MB; try again later."
            )
        }
        let data = Data(body.readableBytesView)
        let status = Int(response.status.code)
        guard status == 200 else {
            logger.notice("catalog refused", metadata: ["catalog.url": "\(url)", "http.status": "\(status)"])
            throw CatalogFailure.status(status, reason: response.status.reasonPhrase, body: data, source: source)
        }
        let decoded = try CatalogResponse.decode(data, contentType: response.headers.first(name: "Content-Type"), source: source)
        if decoded.skipped > 0 {
            logger.notice(
                "catalog results skipped",
                metadata: ["catalog.url": "\(url)", "catalog.skipped": "\(decoded.skipped)", "catalog.kept": "\(decoded.items.count)"]
            )
        }
        return decoded.items
    }

    /// The result of `operation`, unless `deadline` comes first: then it is cancelled (which
    /// closes its connection) and `HTTPClientError.deadlineExceeded` is thrown.
    private static func before<T: Sendable>(
        _ deadline: ContinuousClock.Instant, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let value = try await group.next()! else { throw HTTPClientError.deadlineExceeded }
            return value
        }
    }

    /// Waits for the rate limit's next token if it comes soon enough.
    /// - Throws: `catalog_throttled` saying when to try again, if not.
    private func pace() async throws {
        let now = time.now
        let decision = bucket.withLock { $0.take(at: now) }
        switch decision {
        case .now:
            return
        case .after(let wait):
            logger.debug("catalog call waits for the rate limit", metadata: ["catalog.wait": "\(wait)"])
            do {
                try await clock.sleep(for: wait, tolerance: nil)
            } catch {
                // A search that replaces this one may already have taken its own token; the
                // refund then benefits the next one.
                bucket.withLock { $0.giveBack() }
                throw error
            }
        case .refused(let retryAfter):
            let limit = bucket.withLock { $0.limit }
            let seconds = max(1, Int((retryAfter + .milliseconds(999)).components.seconds))
            let period = limit.period == .seconds(60) ? "a minute" : "every \(limit.period)"
            throw FerryError(
                .catalogThrottled,
                "Ferry keeps to \(limit.calls) calls to Apple's catalog \(period), as Apple asks, and has used them up; "
                    + "try again in \(seconds) second\(seconds == 1 ? "" : "s")."
            )
        }
    }
}
