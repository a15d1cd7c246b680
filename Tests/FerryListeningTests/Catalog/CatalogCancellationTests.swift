import FerryKit
import FerryTestSupport
import Foundation
import Testing

import FerryCore
@testable import FerryListening

/// "A new search from the same client cancels the one still in flight": the replaced caller
/// gets `cancelled` at once, and its HTTP request really stops (the server sees its client go).
@Suite struct CatalogCancellationTests {
    static let replaced = FerryError(.cancelled, "A newer search replaced this one before it finished.")
    /// Cancellation is what these test, not the deadline: under a loaded full run, 10 s passed
    /// before the other searches did, and the stalled one met its deadline instead.
    static let patient = Duration.seconds(120)

    @Test func aNewSearchWithTheSameKeyCancelsTheOneInFlight() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", where: ["term": "jo"], with: .stall(.seconds(120)))
            h.server.answer("/search", where: ["term": "jose james"], with: .fixture("search-music-jose-james.json"))
            let client = h.client(requestTimeout: Self.patient)
            let old = Task { await ferryError { try await client.search(CatalogQuery(term: "jo"), replacing: "web") } }
            try await eventually("the first search to reach the server") { h.server.stalling == 1 }

            let items = try await client.search(CatalogQuery(term: "jose james"), replacing: "web")
            #expect(items.count == 50)
            let oldError = await old.value
            #expect(oldError == Self.replaced)
            try await eventually("the stalled request to be abandoned") { h.server.abandoned == 1 }
            #expect(h.server.stalling == 0)
            #expect(h.server.requests(for: "/search").map { $0["term"] } == ["jo", "jose james"])
        }
    }

    @Test func otherKeysAndNoKeyAreLeftAlone() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", where: ["term": "slow"], with: .stall(.seconds(120), then: "search-song-2-results.json"))
            h.server.answer("/search", with: .fixture("search-empty.json"))
            let client = h.client(requestTimeout: Self.patient)
            async let slow = client.search(CatalogQuery(term: "slow"), replacing: "tab 1")
            try await eventually("the slow search to reach the server") { h.server.stalling == 1 }
            _ = try await client.search(CatalogQuery(term: "fast"), replacing: "tab 2")
            _ = try await client.search(CatalogQuery(term: "faster"))
            #expect(h.server.stalling == 1)
            h.server.releaseStalls()
            let slowItems = try await slow
            #expect(slowItems.count == 2)
            #expect(h.server.abandoned == 0)
        }
    }

    @Test func aSharedRequestLivesOnWhileSomeoneStillWaits() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", where: ["term": "jo"], with: .stall(.seconds(120), then: "search-song-2-results.json"))
            h.server.answer("/search", with: .fixture("search-empty.json"))
            let client = h.client(requestTimeout: Self.patient)
            let key = try CatalogRequest.search(CatalogQuery(term: "jo")).key
            let typing = Task { await ferryError { try await client.search(CatalogQuery(term: "jo"), replacing: "web") } }
            async let other = client.search(CatalogQuery(term: "jo"))
            try await eventually("both callers to wait on one request") { client.flights.waiters(for: key) == 2 }
            try await eventually("the request to reach the server") { h.server.stalling == 1 }

            _ = try await client.search(CatalogQuery(term: "jos"), replacing: "web")
            let typingError = await typing.value
            #expect(typingError == Self.replaced)
            #expect(client.flights.waiters(for: key) == 1)
            h.server.releaseStalls()
            let otherItems = try await other
            #expect(otherItems.map(\.trackName) == ["Here (In Your Arms)", "Worldwide Treasure! (Instrumental)"])
            #expect(h.server.abandoned == 0)
            #expect(h.server.requests(for: "/search").count == 2)
        }
    }

    @Test func cancellingTheCallerStopsTheRequest() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .stall(.seconds(120)))
            let client = h.client(requestTimeout: Self.patient)
            let search = Task { await ferryError { try await client.search(CatalogQuery(term: "jo")) } }
            try await eventually("the search to reach the server") { h.server.stalling == 1 }
            search.cancel()
            let searchError = await search.value
            #expect(searchError == FerryError(.cancelled, "The search was cancelled before it finished."))
            try await eventually("the stalled request to be abandoned") { h.server.abandoned == 1 }
        }
    }

    @Test func anEmptiedSearchBoxStillCancelsTheOldSearch() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .stall(.seconds(120)))
            let client = h.client(requestTimeout: Self.patient)
            let old = Task { await ferryError { try await client.search(CatalogQuery(term: "jo"), replacing: "web") } }
            try await eventually("the first search to reach the server") { h.server.stalling == 1 }
            let error = await ferryError { try await client.search(CatalogQuery(term: ""), replacing: "web") }
            #expect(error?.code == .invalidRequest)
            let oldError = await old.value
            #expect(oldError == Self.replaced)
            try await eventually("the stalled request to be abandoned") { h.server.abandoned == 1 }
        }
    }

    @Test func aCancelledRateLimitWaitGivesItsTokenBack() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .fixture("search-empty.json"))
            let client = h.client(rateLimit: CatalogRateLimit(calls: 20, per: .seconds(60), burst: 1), requestTimeout: Self.patient)
            _ = try await client.search(CatalogQuery(term: "a"))
            let waiting = Task { await ferryError { try await client.search(CatalogQuery(term: "b")) } }
            try await h.clock.waitForSleepers()
            #expect(h.clock.requestedSleeps == [.seconds(3)])
            waiting.cancel()
            let waitingError = await waiting.value
            #expect(waitingError == FerryError(.cancelled, "The search was cancelled before it finished."))
            try await eventually("the unused token to be given back") { client.bucket.withLock { $0.paidUpAt } == .seconds(3) }
            #expect(h.clock.sleeperCount == 0)

            // Without the refund this would be 6 s, over the 5 s limit, and refused.
            async let next = client.search(CatalogQuery(term: "c"))
            try await h.clock.waitForSleepers()
            #expect(h.clock.requestedSleeps == [.seconds(3), .seconds(3)])
            h.clock.advance(by: .seconds(3))
            _ = try await next
            #expect(h.server.requests(for: "/search").map { $0["term"] } == ["a", "c"])
        }
    }
}
