import FerryKit
import FerryTestSupport
import Foundation
import Testing

import FerryCore
@testable import FerryListening

/// The real recorded answers of Apple's catalog (`fixtures/itunes/`), decoded with exact values
/// checked by hand against the files.
@Suite struct CatalogFixtureDecodingTests {
    static func decode(_ name: String) throws -> CatalogResponse {
        try CatalogResponse.decode(CatalogServer.fixture(name), contentType: CatalogServer.appleContentType, source: "fixture")
    }

    @Test(arguments: [
        ("lookup-id.json", 1), ("search-all-limit2.json", 2), ("search-empty.json", 0), ("search-music-jose-james.json", 50),
        ("search-podcast-beyondjazz.json", 1), ("search-song-2-results.json", 2),
    ])
    func everyFixtureDecodesWholly(name: String, count: Int) throws {
        let response = try Self.decode(name)
        #expect(response.items.count == count)
        #expect(response.skipped == 0)
        #expect(Set(response.items.map(\.id)).count == count, "ids are unique")
    }

    @Test func theFirstSongOfTheJoseJamesSearch() throws {
        let items = try Self.decode("search-music-jose-james.json").items
        let desire = try #require(items.first)
        #expect(desire.kind == .song)
        #expect(desire.trackId == 287_805_642)
        #expect(desire.collectionId == 287_805_088)
        #expect(desire.artistId == 5_117_774)
        #expect(desire.id == "287805642")
        #expect(desire.trackName == "Desire")
        #expect(desire.artistName == "Jose James")
        #expect(desire.collectionName == "The Dreamer")
        #expect(desire.previewURL == URL(string: "https://a1.phobos.apple.com/us/r1000/024/Music/4f/63/2c/mzm.dvfzxuyi.aac.p.m4a"))
        #expect(desire.artworkURL == URL(string: "https://a1.phobos.apple.com/us/r1000/001/Music/8f/6d/26/mzi.elifbnfk.100x100-75.jpg"))
        #expect(desire.trackViewURL == URL(string: "https://itunes.apple.com/us/album/desire/id287805088?i=287805642&uo=4"))
        #expect(desire.feedURL == nil)
        #expect(desire.durationSeconds == 449.267)
        #expect(desire.releaseDate == Date(timeIntervalSince1970: 1_206_514_800))  // 2008-03-26 07:00:00 Etc/GMT
        #expect(desire.primaryGenre == "Jazz")
        #expect(desire.country == "USA")
        #expect(desire.explicit == false)
        #expect(desire.trackNumber == 9)
        #expect(desire.title == "Desire")

        let second = items[1]
        #expect(second.artistName == "José James")
        #expect(second.trackName == "Love Conversation")
        #expect(second.durationSeconds == 316.332)
        #expect(items.last?.trackName == "Love")
        #expect(items.allSatisfy { $0.kind == .song && $0.previewURL != nil && $0.artistId != nil })
        #expect(items.filter { $0.primaryGenre == "Jazz" }.count == 43)
        #expect(items.filter { $0.artistName == "José James & Jef Neve" }.count == 11)
    }

    /// Recorded in 2011: `null` artist id, preview and artist page, `null` track number and
    /// duration, "cleaned" explicitness, and no `feedUrl` at all.
    @Test func thePodcastWithItsNulls() throws {
        let podcast = try #require(try Self.decode("search-podcast-beyondjazz.json").items.first)
        #expect(podcast.kind == .podcast)
        #expect(podcast.trackId == 337_994_101)
        #expect(podcast.collectionId == 337_994_101)
        #expect(podcast.artistId == nil)
        #expect(podcast.id == "337994101")
        #expect(podcast.trackName == "s i s t a k")
        #expect(podcast.artistName == "Julie Kummer")
        #expect(podcast.previewURL == nil)
        #expect(podcast.feedURL == nil)
        #expect(podcast.trackViewURL == URL(string: "https://itunes.apple.com/us/podcast/s-i-s-t-a-k/id337994101?uo=4"))
        #expect(podcast.artworkURL == URL(string: "https://a1.phobos.apple.com/us/r30/Podcasts/d6/e9/23/ps.zoppkizk.100x100-75.jpg"))
        #expect(podcast.durationSeconds == nil)
        #expect(podcast.trackNumber == nil)
        #expect(podcast.explicit == false)
        #expect(podcast.releaseDate == Date(timeIntervalSince1970: 1_290_518_700))  // 2010-11-23 13:25:00 Etc/GMT
        #expect(podcast.primaryGenre == "Music")
    }

    /// A lookup that found an album: a collection, with no track fields and no `kind`.
    @Test func aLookedUpCollection() throws {
        let album = try #require(try Self.decode("lookup-id.json").items.first)
        #expect(album.kind == .other)
        #expect(album.trackId == nil)
        #expect(album.collectionId == 396_405_320)
        #expect(album.artistId == 79_924_040)
        #expect(album.id == "396405320")
        #expect(album.trackName == nil)
        #expect(album.collectionName == "Hold it Down - Single")
        #expect(album.title == "Hold it Down - Single")
        #expect(album.artistName == "Various Artists")
        #expect(album.previewURL == nil)
        #expect(album.trackViewURL == URL(string: "https://itunes.apple.com/us/album/hold-it-down-single/id396405320?uo=4"))
        #expect(album.releaseDate == Date(timeIntervalSince1970: 1_287_990_000))  // ISO 8601, 2010-10-25T07:00:00Z
        #expect(album.primaryGenre == "Dance")
        #expect(album.explicit == false)
        #expect(album.durationSeconds == nil)
    }

    @Test func theTwoSongSearches() throws {
        let jackson = try Self.decode("search-all-limit2.json").items
        #expect(jackson.map(\.trackName) == ["Man In the Mirror", "Billie Jean"])
        #expect(jackson.map(\.trackNumber) == [5, 16])
        #expect(jackson.map(\.durationSeconds) == [318.96, 292.96])
        #expect(jackson.map(\.releaseDate) == [Date(timeIntervalSince1970: 1_121_756_400), Date(timeIntervalSince1970: 1_121_756_400)])

        let hello = try Self.decode("search-song-2-results.json").items
        #expect(hello.map(\.artistName) == ["Hellogoodbye", "Hello, Happy World!"])
        #expect(hello.map(\.trackId) == [1_450_993_693, 1_346_369_873])
        #expect(hello.first?.releaseDate == Date(timeIntervalSince1970: 1_154_952_000))  // 2006-08-07T12:00:00Z
        #expect(hello.first?.durationSeconds == 240.614)
        #expect(hello.first?.primaryGenre == "Alternative")
    }

    @Test func anItemRoundTripsThroughFerrysOwnJSON() throws {
        let items = try Self.decode("search-music-jose-james.json").items + Self.decode("search-podcast-beyondjazz.json").items
        let data = try FerryJSON.encoder().encode(items)
        #expect(try FerryJSON.decoder().decode([CatalogItem].self, from: data) == items)
    }
}
