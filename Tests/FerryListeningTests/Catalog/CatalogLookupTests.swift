import FerryKit
import FerryTestSupport
import Foundation
import Testing

import FerryCore
@testable import FerryListening

@Suite struct CatalogLookupTests {
    @Test func lookupByID() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/lookup", where: ["id": "396405320"], with: .fixture("lookup-id.json"))
            let item = try await h.client().lookup(id: 396_405_320)
            #expect(item?.collectionName == "Hold it Down - Single")
            #expect(item?.id == "396405320")
            #expect(h.server.requests(for: "/lookup").map(\.rawQuery) == ["id=396405320"])
        }
    }

    @Test func lookupOfSeveralIDsIsOneCall() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/lookup", where: ["id": "159294478,159293848"], with: .fixture("search-all-limit2.json"))
            let items = try await h.client().lookup(ids: [159_294_478, 159_293_848])
            #expect(items.map(\.trackId) == [159_294_478, 159_293_848])
            #expect(h.server.requests(for: "/lookup").map { $0["id"] } == ["159294478,159293848"])
        }
    }

    @Test func anUnknownIDIsNil() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/lookup", with: .fixture("search-empty.json"))
            let item = try await h.client().lookup(id: 1)
            #expect(item == nil)
        }
    }

    @Test func lookupByApplePodcastsAddress() async throws {
        try await CatalogHarness.run { h in
            h.server.answer("/lookup", where: ["id": "337994101"], with: .fixture("search-podcast-beyondjazz.json"))
            let url = URL(string: "https://podcasts.apple.com/us/podcast/s-i-s-t-a-k/id337994101?i=1000123456")!
            let podcast = try await h.client().lookup(applePodcastsURL: url)
            #expect(podcast?.kind == .podcast)
            #expect(podcast?.trackName == "s i s t a k")
            #expect(h.server.requests(for: "/lookup").map { $0["id"] } == ["337994101"])
        }
    }

    @Test func aForeignAddressIsRefusedWithoutACall() async throws {
        try await CatalogHarness.run { h in
            let url = URL(string: "https://example.com/us/podcast/x/id1")!
            let error = await ferryError { try await h.client().lookup(applePodcastsURL: url) }
            #expect(
                error
                    == FerryError(
                        .invalidURL,
                        "https://example.com/us/podcast/x/id1 is not an Apple Podcasts show address; copy one like https://podcasts.apple.com/us/podcast/name/id123456789."
                    )
            )
            #expect(h.server.requests.isEmpty)
        }
    }

    @Test(arguments: [
        ([Int64](), "Give at least one catalog id to look up."),
        ([1, 0, 2], "Catalog ids are positive numbers; got 0."),
        ([-7], "Catalog ids are positive numbers; got -7."),
        (Array(1...201), "At most 200 ids can be looked up at once; got 201."),
    ])
    func invalidIDsAreRefused(ids: [Int64], message: String) throws {
        let error = #expect(throws: FerryError.self) { try CatalogRequest.lookup(ids: ids) }
        #expect(error == FerryError(.invalidRequest, message))
    }
}
