import FerryKit
import FerryTestSupport
import Foundation
import Testing

import FerryCore
@testable import FerryListening

/// At most about 20 calls a minute, as Apple asks: a burst, then one every 3 s, short waits
/// taken, long ones refused with a time to come back. On the manual clock; nothing sleeps.
@Suite struct CatalogRateLimitTests {
    @Test func theBucketAllowsABurstThenPacesCalls() {
        var bucket = TokenBucket(limit: .apple)
        #expect(CatalogRateLimit.apple.interval == .seconds(3))
        for _ in 1...5 { #expect(bucket.take(at: .zero) == .now) }
        #expect(bucket.take(at: .zero) == .after(.seconds(3)), "the 6th waits for one token")
        #expect(bucket.take(at: .zero) == .refused(retryAfter: .seconds(6)), "the 7th would wait 6 s: too long")
        #expect(bucket.take(at: .seconds(1)) == .after(.seconds(5)), "5 s is short enough")
        #expect(bucket.take(at: .seconds(1)) == .refused(retryAfter: .seconds(8)))
        // Refusals reserve nothing: at 9 s the next token is due.
        #expect(bucket.take(at: .seconds(9)) == .now)
        // After a quiet minute the whole burst is back, and no more.
        for _ in 1...5 { #expect(bucket.take(at: .seconds(120)) == .now) }
        #expect(bucket.take(at: .seconds(120)) == .after(.seconds(3)))
    }

    @Test func theSteadyRateIsTwentyAMinute() {
        // No waiting, so that every call that goes is counted when it asks.
        var bucket = TokenBucket(limit: CatalogRateLimit(maxWait: .zero))
        var granted = 0
        var now = Duration.zero
        while now < .seconds(600) {
            if case .now = bucket.take(at: now) { granted += 1 }
            now += .milliseconds(500)
        }
        // The burst of 5, then one every 3 s for ten minutes (the 200th is due at 600 s, just after).
        #expect(granted == 5 + 200 - 1)
    }

    @Test func aTokenGivenBackCanBeTakenAgain() {
        var bucket = TokenBucket(limit: .apple)
        for _ in 1...5 { _ = bucket.take(at: .zero) }
        #expect(bucket.take(at: .zero) == .after(.seconds(3)))
        bucket.giveBack()
        #expect(bucket.take(at: .zero) == .after(.seconds(3)))
        #expect(bucket.paidUpAt == .seconds(18))
    }

    @Test func theSettingsAreConfigurable() {
        var bucket = TokenBucket(limit: CatalogRateLimit(calls: 2, per: .seconds(10), burst: 1, maxWait: .zero))
        #expect(bucket.take(at: .zero) == .now)
        #expect(bucket.take(at: .zero) == .refused(retryAfter: .seconds(5)))
        #expect(bucket.take(at: .seconds(5)) == .now)
    }

    @Test func theClientWaitsOnTheClockOrRefuses() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .fixture("search-empty.json"))
            let client = h.client(cacheTTL: .zero, rateLimit: CatalogRateLimit(calls: 20, per: .seconds(60), burst: 2))
            _ = try await client.search(CatalogQuery(term: "one"))
            _ = try await client.search(CatalogQuery(term: "two"))
            #expect(h.clock.requestedSleeps.isEmpty, "the burst goes at once")

            async let third = client.search(CatalogQuery(term: "three"))
            try await h.clock.waitForSleepers()
            #expect(h.clock.requestedSleeps == [.seconds(3)])
            #expect(h.server.requests(for: "/search").count == 2, "the third waits for its token")

            // Meanwhile a fourth would have to wait 6 s: it is refused, saying when to retry.
            let error = await ferryError { try await client.search(CatalogQuery(term: "four")) }
            #expect(
                error
                    == FerryError(
                        .catalogThrottled,
                        "Ferry keeps to 20 calls to Apple's catalog a minute, as Apple asks, and has used them up; try again in 6 seconds."
                    )
            )

            h.clock.advance(by: .seconds(3))
            _ = try await third
            #expect(h.server.requests(for: "/search").map { $0["term"] } == ["one", "two", "three"])
        }
    }

    @Test func cacheHitsTakeNoToken() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .fixture("search-empty.json"))
            let client = h.client(rateLimit: CatalogRateLimit(calls: 1, per: .seconds(60), burst: 1, maxWait: .zero))
            for _ in 1...5 { _ = try await client.search(CatalogQuery(term: "same")) }
            #expect(h.server.requests(for: "/search").count == 1)
            let error = await ferryError { try await client.search(CatalogQuery(term: "other")) }
            #expect(error?.code == .catalogThrottled)
            #expect(error?.message.hasSuffix("try again in 60 seconds.") == true)
        }
    }
}
