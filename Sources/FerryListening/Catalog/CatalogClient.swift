import AsyncHTTPClient
import FerryCore
import FerryKit
import Foundation
import Logging
import Synchronization

/// Apple's iTunes Search and Lookup API (`GET {base}/search`, `GET {base}/lookup`), used
/// politely: identical calls within `cacheTTL` are answered from memory, identical calls at the
/// same time share one request, and calls are paced (``CatalogRateLimit``) because Apple asks
/// for about 20 a minute. Every failure is a `FerryError` that says what to do.
///
/// A web app that searches as the listener types passes a `replacing` key, so that each new
/// search cancels the one still in flight for that key.
package final class CatalogClient: Sendable {
    package static let defaultBaseURL = URL(string: "https://itunes.apple.com")!
    /// The environment variable that points Ferry at another catalog (tests serve recordings).
    package static let baseURLVariable = "FERRY_CATALOG_URL"

    package let baseURL: URL
    let clients: HTTPClients
    /// The client for the catalog: through the daemon's proxy for its host, if any.
    var http: HTTPClient { clients.client(for: baseURL) }
    let clock: any Clock<Duration>
    let time: ClockReader
    let logger: Logger
    let requestTimeout: Duration
    let userAgent: String
    let cache: CatalogCache
    let flights = RequestCoalescer<[CatalogItem]>()
    let bucket: Mutex<TokenBucket>
    /// The search in flight for each `replacing` key, to be stopped by the next one.
    let current = Mutex<[String: StopSignal]>([:])

    /// - Parameters:
    ///   - baseURL: usually ``baseURL(environment:)``.
    ///   - clients: shared with the rest of the daemon; their read timeout applies.
    ///   - clock: drives the cache's TTL and the rate limit; tests pass a manual clock.
    ///   - cacheTTL: how long an answer is reused; zero turns the cache off.
    ///   - rateLimit: how often Apple is called.
    ///   - requestTimeout: the most one call may take, connecting included. Without it a call
    ///     to an unreachable host would be retried by the HTTP client indefinitely.
    package init(
        baseURL: URL = CatalogClient.defaultBaseURL, clients: HTTPClients, clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger, cacheTTL: Duration = .seconds(15 * 60), rateLimit: CatalogRateLimit = .apple,
        requestTimeout: Duration = .seconds(15), userAgent: String = "Ferry/\(FerryVersion.current)"
    ) {
        self.baseURL = baseURL
        self.clients = clients
        self.clock = clock
        let time = ClockReader(clock)
        self.time = time
        self.logger = logger
        self.requestTimeout = requestTimeout
        self.userAgent = userAgent
        self.cache = CatalogCache(ttl: cacheTTL)
        self.bucket = Mutex(TokenBucket(limit: rateLimit, now: time.now))
    }

    /// `FERRY_CATALOG_URL` if it is set (and not empty), else Apple's own address.
    /// - Throws: `invalid_url` if the variable is set to something that is not an `http` or
    ///   `https` URL, rather than silently calling Apple instead.
    package static func baseURL(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        guard let text = environment[baseURLVariable]?.trimmingWhitespace(), !text.isEmpty else { return defaultBaseURL }
        guard let url = URL(string: String(text)), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host?.isEmpty == false, url.query == nil
        else {
            throw FerryError(.invalidURL, "\(baseURLVariable) is \"\(text)\", which is not an http(s) base URL; fix it or unset it.")
        }
        return url
    }

    /// Searches songs or podcasts.
    /// - Parameters:
    ///   - query: validated first (`invalid_request` if the term is empty, the country is not
    ///     two letters or the limit is outside 1...200).
    ///   - key: when set, a later search with the same key cancels this one if it is still
    ///     running: this call then throws `cancelled`, and its request is abandoned unless
    ///     another caller is waiting for the same answer.
    /// - Returns: the results Apple sent, minus any that could not be read.
    package func search(_ query: CatalogQuery, replacing key: String? = nil) async throws -> [CatalogItem] {
        guard let key else { return try await perform(try CatalogRequest.search(query)) }
        let signal = StopSignal()
        // Before validation: a search box just emptied still stops the search for the old text.
        current.withLock { $0.updateValue(signal, forKey: key) }?.fire()
        defer { current.withLock { if $0[key] === signal { $0[key] = nil } } }
        let request = try CatalogRequest.search(query)
        guard let items = try await signal.race({ try await self.perform(request) }) else {
            logger.debug("catalog search replaced", metadata: ["catalog.key": "\(key)"])
            throw CatalogFailure.replaced
        }
        return items
    }

    /// The item with this catalog id (a track, a collection or a podcast), or nil if Apple
    /// knows none.
    package func lookup(id: Int64) async throws -> CatalogItem? {
        let items = try await lookup(ids: [id])
        return items.first { $0.trackId == id || $0.collectionId == id } ?? items.first
    }

    /// Several items in one call (up to 200 ids); unknown ids are simply missing.
    package func lookup(ids: [Int64]) async throws -> [CatalogItem] {
        try await perform(try CatalogRequest.lookup(ids: ids))
    }

    /// The podcast behind an Apple Podcasts page address (see ``ApplePodcastsURL``).
    /// - Throws: `invalid_url` if the address is not an Apple Podcasts show page.
    package func lookup(applePodcastsURL url: URL) async throws -> CatalogItem? {
        guard let id = ApplePodcastsURL.id(from: url) else {
            throw FerryError(
                .invalidURL,
                "\(url.absoluteString) is not an Apple Podcasts show address; "
                    + "copy one like https://podcasts.apple.com/us/podcast/name/id123456789."
            )
        }
        return try await lookup(id: id)
    }
}
