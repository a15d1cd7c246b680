import AsyncHTTPClient
import FerryKit
import FerryTestSupport
import Foundation
import Testing

import FerryCore
@testable import FerryListening

/// Every way a call to the catalog fails, against a real loopback server, and the exact
/// `FerryError` each becomes.
@Suite struct CatalogErrorTests {
    static let query = CatalogQuery(term: "jose james")

    @Test func aBadRequestQuotesApplesMessage() async throws {
        try await CatalogHarness.run { h in
            h.server.answer(
                "/search",
                with: .body(
                    #"{"errorMessage":"Invalid value(s) for key(s): [mediaType]","queryParameters":{"media":"musik"}}"#, status: 400
                )
            )
            let error = await ferryError { try await h.client().search(Self.query) }
            #expect(
                error
                    == FerryError(
                        .catalogBadRequest,
                        "Apple's catalog refused the request: \"Invalid value(s) for key(s): [mediaType]\". Check the search term and options."
                    )
            )
        }
    }

    @Test func aBadRequestWithoutAMessage() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .body("<h1>Bad Request</h1>", status: 400, contentType: "text/html"))
            let error = await ferryError { try await h.client().search(Self.query) }
            #expect(error == FerryError(.catalogBadRequest, "Apple's catalog refused the request (400 Bad Request). Check the search term and options."))
        }
    }

    @Test(arguments: [403, 429])
    func throttlingByApple(status: Int) async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .body("<h1>slow down</h1>", status: status, contentType: "text/html"))
            let error = await ferryError { try await h.client().search(Self.query) }
            #expect(error == FerryError(.catalogThrottled, "Apple's catalog is limiting requests; try again in a minute."))
        }
    }

    @Test func aServerThatDoesNotAnswerTimesOut() async throws {
        try await CatalogHarness.run(readTimeout: .milliseconds(300)) { h in
            h.server.answer("/search", with: .hang(.seconds(10)))
            let error = await ferryError { try await h.client().search(Self.query) }
            #expect(error?.code == .catalogTimeout)
            #expect(error?.message == "Apple's catalog did not answer in time (read timeout); check the network connection and try again.")
        }
    }

    @Test func theRequestTimeoutBoundsASlowTrickle() async throws {
        try await CatalogHarness.run { h in
            // Blank lines every 20 ms keep the read timeout happy; only the overall limit stops it.
            h.server.answer("/search", with: .stall(.seconds(10)))
            let error = await ferryError { try await h.client(requestTimeout: .milliseconds(400)).search(Self.query) }
            #expect(error?.code == .catalogTimeout)
            #expect(error?.message == "Apple's catalog did not answer in time (deadline exceeded); check the network connection and try again.")
        }
    }

    @Test func nothingListeningIsUnreachable() async throws {
        // The discard port: nothing listens there on a test machine. (A port a test server just
        // gave up can still accept connections while that server winds down.)
        let base = URL(string: "http://127.0.0.1:9")!
        // As the daemon's client: a refused connection is reported at once, not retried
        // silently until the deadline.
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let client = CatalogClient(
            baseURL: base, clients: HTTPClients(direct: http), clock: ManualClock(), logger: testLogger("catalog"), rateLimit: CatalogHarness.noRateLimit,
            requestTimeout: .seconds(20)
        )
        let error = await ferryError { try await client.search(Self.query) }
        try await http.shutdown()
        #expect(
            error
                == FerryError(
                    .catalogUnreachable,
                    "Could not reach Apple's catalog at \(base.absoluteString) (connection refused); check the network connection, "
                        + "or FERRY_CATALOG_URL if it is set."
                )
        )
    }

    @Test func aPageThatIsNotJSON() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .body("<html><body>Captive portal</body></html>", contentType: "text/html; charset=utf-8"))
            let error = await ferryError { try await h.client().search(Self.query) }
            #expect(
                error
                    == FerryError(
                        .catalogBadResponse,
                        "The catalog at \(h.base.absoluteString) answered with something that is not its JSON (text/html; charset=utf-8); "
                            + "try again later, or check FERRY_CATALOG_URL if it is set."
                    )
            )
        }
    }

    @Test func jsonWithoutResults() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .body(#"{"resultCount": 0}"#))
            let error = await ferryError { try await h.client().search(Self.query) }
            #expect(
                error
                    == FerryError(
                        .catalogBadResponse,
                        "The catalog at \(h.base.absoluteString) answered JSON without a \"results\" list; check FERRY_CATALOG_URL, or try again later."
                    )
            )
        }
    }

    @Test func aServerError() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .body("oops", status: 503, contentType: "text/plain"))
            let error = await ferryError { try await h.client().search(Self.query) }
            #expect(
                error
                    == FerryError(
                        .catalogBadResponse,
                        "The catalog at \(h.base.absoluteString) answered 503 Service Unavailable; try again later, or check FERRY_CATALOG_URL if it is set."
                    )
            )
        }
    }

    @Test func aLeadingBlankLineAnswerAsJavaScriptWithAnUnreadableResult() async throws {
        try await CatalogHarness.run { h in
            h.server.answer(
                "/search",
                with: .body("\n\n\n" + #"{"resultCount":2,"results":[null,{"kind":"song","trackId":"9","trackName":"Nine"}]}"#)
            )
            let items = try await h.client().search(Self.query)
            #expect(items == [CatalogItem(kind: .song, trackId: 9, trackName: "Nine")])
        }
    }

    @Test func failuresAreNotCached() async throws {
        try await CatalogHarness.run { h in
            h.server.script("/search", [.body("busy", status: 429, contentType: "text/plain")])
            h.server.answer("/search", with: .fixture("search-all-limit2.json"))
            let client = h.client()
            let error = await ferryError { try await client.search(Self.query) }
            #expect(error?.code == .catalogThrottled)
            let items = try await client.search(Self.query)
            #expect(items.count == 2)
            #expect(h.server.requests(for: "/search").count == 2)
        }
    }
}
