import FerryKit
import FerryTestSupport
import Foundation
import Testing

import FerryCore
@testable import FerryListening

/// Identical calls cost Apple one request: answered from the cache within its TTL (on the
/// manual clock), and shared while in flight.
@Suite struct CatalogCacheTests {
    static let query = CatalogQuery(term: "jose james")

    @Test func anIdenticalSearchIsAnsweredFromTheCache() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .fixture("search-music-jose-james.json"))
            let client = h.client()
            let first = try await client.search(Self.query)
            let second = try await client.search(Self.query)
            #expect(first.count == 50)
            #expect(second == first)
            #expect(h.server.requests(for: "/search").count == 1)
        }
    }

    @Test func theCacheKeyIsTheNormalisedQuery() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .fixture("search-empty.json"))
            let client = h.client()
            _ = try await client.search(CatalogQuery(term: "Jose James", country: "us"))
            _ = try await client.search(CatalogQuery(term: "  jose   JAMES ", country: "US"))
            #expect(h.server.requests(for: "/search").count == 1)
            // Anything Apple would answer differently is another request.
            _ = try await client.search(CatalogQuery(term: "jose james", country: "GB"))
            _ = try await client.search(CatalogQuery(term: "jose james", limit: 10))
            _ = try await client.search(CatalogQuery(term: "jose james", explicit: false))
            _ = try await client.search(CatalogQuery(term: "jose james", media: .podcasts))
            _ = try await client.search(CatalogQuery(term: "jose jame"))
            #expect(h.server.requests(for: "/search").count == 6)
        }
    }

    @Test func anAnswerExpiresAfterItsTTL() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .fixture("search-song-2-results.json"))
            let client = h.client()
            _ = try await client.search(Self.query)
            h.clock.advance(by: .seconds(15 * 60) - .milliseconds(1))
            _ = try await client.search(Self.query)
            #expect(h.server.requests(for: "/search").count == 1, "still fresh a millisecond before 15 minutes")
            h.clock.advance(by: .milliseconds(1))
            let items = try await client.search(Self.query)
            #expect(items.count == 2)
            #expect(h.server.requests(for: "/search").count == 2, "asked again at 15 minutes")
            _ = try await client.search(Self.query)
            #expect(h.server.requests(for: "/search").count == 2, "and the new answer is cached in turn")
        }
    }

    @Test func theTTLIsConfigurable() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .fixture("search-empty.json"))
            let client = h.client(cacheTTL: .seconds(10))
            _ = try await client.search(Self.query)
            h.clock.advance(by: .seconds(9))
            _ = try await client.search(Self.query)
            #expect(h.server.requests(for: "/search").count == 1)
            h.clock.advance(by: .seconds(1))
            _ = try await client.search(Self.query)
            #expect(h.server.requests(for: "/search").count == 2)

            let uncached = h.client(cacheTTL: .zero)
            _ = try await uncached.search(Self.query)
            _ = try await uncached.search(Self.query)
            #expect(h.server.requests(for: "/search").count == 4)
        }
    }

    @Test func lookupsAreCachedToo() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/lookup", with: .fixture("lookup-id.json"))
            let client = h.client()
            _ = try await client.lookup(id: 396_405_320)
            _ = try await client.lookup(ids: [396_405_320])
            #expect(h.server.requests(for: "/lookup").count == 1)
        }
    }

    @Test func concurrentIdenticalSearchesShareOneRequest() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .stall(.seconds(30), then: "search-all-limit2.json"))
            // No cache: only the sharing of the request in flight can save the second call.
            let client = h.client(cacheTTL: .zero)
            let key = try CatalogRequest.search(Self.query).key
            async let first = client.search(Self.query)
            async let second = client.search(Self.query)
            try await eventually("both callers to wait on one request") { client.flights.waiters(for: key) == 2 }
            try await eventually("the request to reach the server") { h.server.stalling == 1 }
            #expect(h.server.requests(for: "/search").count == 1)
            h.server.releaseStalls()
            let (a, b) = try await (first, second)
            #expect(a.map(\.trackName) == ["Man In the Mirror", "Billie Jean"])
            #expect(b == a)
            #expect(h.server.requests(for: "/search").count == 1)
        }
    }

    @Test func theCacheIsBounded() {
        let cache = CatalogCache(ttl: .seconds(60), capacity: 2)
        let item = [CatalogItem(kind: .song, trackId: 1, trackName: "a")]
        cache.store(item, for: "a", now: .seconds(0))
        cache.store(item, for: "b", now: .seconds(1))
        cache.store(item, for: "c", now: .seconds(2))
        #expect(cache.count == 2)
        #expect(cache.items(for: "a", now: .seconds(2)) == nil, "the oldest went")
        #expect(cache.items(for: "b", now: .seconds(2)) == item)
        #expect(cache.items(for: "c", now: .seconds(2)) == item)
    }
}
