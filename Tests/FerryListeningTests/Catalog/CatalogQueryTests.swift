import FerryKit
import FerryTestSupport
import Foundation
import Testing

import FerryCore
@testable import FerryListening

/// What reaches the server for a search, decoded there the way Apple decodes it.
@Suite struct CatalogQueryTests {
    typealias Item = CatalogServer.Seen.Item

    @Test func aSongSearchSendsEveryParameter() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .fixture("search-music-jose-james.json"))
            let items = try await h.client().search(CatalogQuery(term: "jose james"))
            #expect(items.count == 50)
            let seen = try #require(h.server.requests(for: "/search").first)
            #expect(
                seen.items == [
                    Item("term", "jose james"), Item("media", "music"), Item("entity", "song"), Item("country", "US"),
                    Item("limit", "50"), Item("explicit", "Yes"),
                ]
            )
            #expect(seen.rawQuery == "term=jose%20james&media=music&entity=song&country=US&limit=50&explicit=Yes")
            #expect(seen.headers["user-agent"] == "Ferry/\(FerryVersion.current)")
        }
    }

    @Test func aPodcastSearchWithOptions() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", where: ["media": "podcast"], with: .fixture("search-podcast-beyondjazz.json"))
            let query = CatalogQuery(term: "beyondjazz", media: .podcasts, country: "gb", limit: 200, explicit: false)
            let items = try await h.client().search(query)
            #expect(items.map(\.trackName) == ["s i s t a k"])
            #expect(
                h.server.requests(for: "/search").map(\.items) == [
                    [
                        Item("term", "beyondjazz"), Item("media", "podcast"), Item("entity", "podcast"), Item("country", "GB"),
                        Item("limit", "200"), Item("explicit", "No"),
                    ]
                ]
            )
        }
    }

    @Test(arguments: [
        "AC/DC & Friends", "C# + C++ = ?", "a=b&c=d", "100% #1", "question?/answer", "plus+sign", "José González", "日本の音楽",
        "emoji 🎷 sax", "quote \"it\" 'here'", "semi;colon,comma", "tilde~dash-dot.under_score",
    ])
    func theServerReceivesExactlyTheTerm(term: String) async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .fixture("search-empty.json"))
            _ = try await h.client().search(CatalogQuery(term: term))
            let seen = try #require(h.server.requests(for: "/search").first)
            #expect(seen["term"] == term)
            #expect(seen.items.count == 6, "no character of the term split the query: \(seen.rawQuery)")
        }
    }

    @Test func theTermIsTidiedBeforeItIsSent() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .fixture("search-empty.json"))
            _ = try await h.client().search(CatalogQuery(term: "  Jose \t\n James  "))
            #expect(h.server.requests(for: "/search").map { $0["term"] } == ["Jose James"])
        }
    }

    @Test func aBaseURLWithAPathKeepsIt() throws {
        let request = try CatalogRequest.search(CatalogQuery(term: "x", limit: 1))
        let expected = "term=x&media=music&entity=song&country=US&limit=1&explicit=Yes"
        #expect(request.url(base: URL(string: "http://127.0.0.1:8080")!) == "http://127.0.0.1:8080/search?\(expected)")
        #expect(request.url(base: URL(string: "http://127.0.0.1:8080/")!) == "http://127.0.0.1:8080/search?\(expected)")
        #expect(request.url(base: URL(string: "https://mirror.example/itunes/")!) == "https://mirror.example/itunes/search?\(expected)")
    }

    @Test func percentEncodingLeavesOnlyUnreservedCharacters() {
        #expect(CatalogRequest.percentEncoded("a b+c&d=e/f?g#h%i") == "a%20b%2Bc%26d%3De%2Ff%3Fg%23h%25i")
        #expect(CatalogRequest.percentEncoded("é日") == "%C3%A9%E6%97%A5")
        #expect(CatalogRequest.percentEncoded("AZaz09-._~") == "AZaz09-._~")
    }

    @Test(arguments: [
        (CatalogQuery(term: "x", limit: 0), "The limit must be between 1 and 200 results; got 0."),
        (CatalogQuery(term: "x", limit: 201), "The limit must be between 1 and 200 results; got 201."),
        (CatalogQuery(term: "x", limit: -5), "The limit must be between 1 and 200 results; got -5."),
        (CatalogQuery(term: "  \n "), "The search term is empty; type something to search for."),
        (CatalogQuery(term: "x", country: "USA"), "The country must be a two-letter store code such as US or GB; got \"USA\"."),
        (CatalogQuery(term: "x", country: "1A"), "The country must be a two-letter store code such as US or GB; got \"1A\"."),
        (CatalogQuery(term: "x", country: ""), "The country must be a two-letter store code such as US or GB; got \"\"."),
        (CatalogQuery(term: String(repeating: "a", count: 257)), "The search term is 257 characters long; at most 256 are allowed."),
    ])
    func invalidQueriesAreRefusedBeforeAnyCall(query: CatalogQuery, message: String) async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/search", with: .fixture("search-empty.json"))
            let error = await ferryError { try await h.client().search(query) }
            #expect(error == FerryError(.invalidRequest, message))
            #expect(h.server.requests.isEmpty)
        }
    }

    @Test func theLimitsAreInclusive() throws {
        #expect(try CatalogQuery(term: "x", limit: 1).normalized().limit == 1)
        #expect(try CatalogQuery(term: "x", limit: 200).normalized().limit == 200)
    }

    @Test func theBaseURLComesFromTheEnvironment() throws {
        #expect(try CatalogClient.baseURL(environment: [:]) == URL(string: "https://itunes.apple.com")!)
        #expect(try CatalogClient.baseURL(environment: ["FERRY_CATALOG_URL": ""]) == URL(string: "https://itunes.apple.com")!)
        #expect(
            try CatalogClient.baseURL(environment: ["FERRY_CATALOG_URL": "http://127.0.0.1:4321"]) == URL(string: "http://127.0.0.1:4321")!
        )
        #expect(
            try CatalogClient.baseURL(environment: ["FERRY_CATALOG_URL": " https://mirror.example/itunes \n"])
                == URL(string: "https://mirror.example/itunes")!
        )
        for bad in ["itunes.apple.com", "ftp://mirror.example", "http://", "http://host/?x=1"] {
            let error = #expect(throws: FerryError.self) { try CatalogClient.baseURL(environment: ["FERRY_CATALOG_URL": bad]) }
            #expect(error == FerryError(.invalidURL, "FERRY_CATALOG_URL is \"\(bad)\", which is not an http(s) base URL; fix it or unset it."))
        }
    }
}
