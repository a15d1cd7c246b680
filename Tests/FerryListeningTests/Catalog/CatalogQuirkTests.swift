import FerryKit
import FerryTestSupport
import Foundation
import Testing

import FerryCore
@testable import FerryListening

/// What the real catalog has been seen to send besides the happy path, inline.
@Suite struct CatalogQuirkTests {
    static func decode(_ data: Data) throws -> CatalogResponse {
        try CatalogResponse.decode(data, contentType: CatalogServer.appleContentType, source: "inline")
    }

    @Test func numbersSentAsStrings() throws {
        let json = appleJSON(
            #"{"kind": "song", "trackId": "123", "collectionId": " 456 ", "artistId": "789", "trackName": "Strings", "trackTimeMillis": "30000", "trackNumber": "3"}"#
        )
        let item = try #require(try Self.decode(json).items.first)
        #expect(item.trackId == 123)
        #expect(item.collectionId == 456)
        #expect(item.artistId == 789)
        #expect(item.durationSeconds == 30)
        #expect(item.trackNumber == 3)
        #expect(item.id == "123")
    }

    @Test func namesSentAsNumbers() throws {
        let item = try #require(try Self.decode(appleJSON(#"{"kind": "song", "trackId": 1, "trackName": 1999, "artistName": "Prince"}"#)).items.first)
        #expect(item.trackName == "1999")
    }

    @Test func nullsAndMissingFieldsAreTolerated() throws {
        let json = appleJSON(
            #"{"wrapperType": "track", "kind": "podcast", "trackId": null, "collectionId": 42, "artistId": null, "collectionName": "A Show", "previewUrl": null, "artistViewUrl": null, "feedUrl": null, "trackTimeMillis": null, "trackNumber": null, "releaseDate": null}"#
        )
        let item = try #require(try Self.decode(json).items.first)
        #expect(item == CatalogItem(kind: .podcast, collectionId: 42, collectionName: "A Show"))
        #expect(item.id == "42")
        #expect(item.explicit == false)
    }

    @Test func aPodcastWithAFeed() throws {
        let json = appleJSON(
            #"{"wrapperType": "track", "kind": "podcast", "collectionId": 1200361736, "trackId": 1200361736, "artistName": "The New York Times", "collectionName": "The Daily", "trackName": "The Daily", "feedUrl": "https://feeds.simplecast.com/54nAGcIl", "artworkUrl30": "https://example.com/30.jpg", "artworkUrl60": "https://example.com/60.jpg", "artworkUrl100": "https://example.com/100.jpg", "artworkUrl600": "https://example.com/600.jpg", "trackExplicitness": "explicit", "releaseDate": "2024-05-01T09:45:00Z"}"#
        )
        let item = try #require(try Self.decode(json).items.first)
        #expect(item.feedURL == URL(string: "https://feeds.simplecast.com/54nAGcIl"))
        #expect(item.artworkURL == URL(string: "https://example.com/600.jpg"))
        #expect(item.previewURL == nil)
        #expect(item.explicit == true)
        #expect(item.releaseDate == Date(timeIntervalSince1970: 1_714_556_700))
    }

    @Test(arguments: [
        (#""artworkUrl100": "https://e.com/100.jpg", "artworkUrl60": "https://e.com/60.jpg""#, "https://e.com/100.jpg"),
        (#""artworkUrl60": "https://e.com/60.jpg""#, "https://e.com/60.jpg"),
        (#""artworkUrl600": null, "artworkUrl100": "", "artworkUrl60": "https://e.com/60.jpg""#, "https://e.com/60.jpg"),
        (#""artworkUrl30": "https://e.com/30.jpg""#, nil),
    ])
    func artworkPrefersTheLargest(fields: String, expected: String?) throws {
        let item = try #require(try Self.decode(appleJSON(#"{"trackName": "x", \#(fields)}"#)).items.first)
        #expect(item.artworkURL == expected.flatMap(URL.init(string:)))
    }

    @Test func unknownWrapperTypesAndKindsAreOther() throws {
        let items = try Self.decode(
            appleJSON(
                #"{"wrapperType": "audiobook", "collectionId": 1, "collectionName": "A Book"}"#,
                #"{"wrapperType": "track", "kind": "music-video", "trackId": 2, "trackName": "A Video"}"#,
                #"{"wrapperType": "track", "kind": "ebook", "trackId": 3, "trackName": "A Book", "trackExplicitness": "notExplicit"}"#
            )
        ).items
        #expect(items.map(\.kind) == [.other, .other, .other])
        #expect(items.map(\.id) == ["1", "2", "3"])
    }

    @Test func explicitnessComesFromTheTrackElseTheCollection() throws {
        let items = try Self.decode(
            appleJSON(
                #"{"trackName": "a", "trackExplicitness": "explicit"}"#,
                #"{"trackName": "b", "trackExplicitness": "cleaned", "collectionExplicitness": "explicit"}"#,
                #"{"collectionName": "c", "collectionExplicitness": "explicit"}"#,
                #"{"trackName": "d"}"#,
                #"{"trackName": "e", "trackExplicitness": true}"#
            )
        ).items
        #expect(items.map(\.explicit) == [true, false, true, false, false])
    }

    @Test func leadingBlankLinesAndAByteOrderMark() throws {
        let body = appleJSON(#"{"kind": "song", "trackId": 7, "trackName": "Seven"}"#)
        for prefix in ["\n\n\n", "\r\n \t\r\n", "\u{FEFF}", "\u{FEFF}\n\n"] {
            let response = try Self.decode(Data(prefix.utf8) + body)
            #expect(response.items.map(\.trackName) == ["Seven"], "prefix \(Array(prefix.unicodeScalars))")
        }
    }

    @Test func resultsThatCannotBeReadAreSkippedAndCounted() throws {
        let response = try Self.decode(
            appleJSON(
                #"{"kind": "song", "trackId": 1, "trackName": "One"}"#, "null", "42", #""a string""#, "[1, 2]",
                #"{"wrapperType": "track", "kind": "song", "trackId": 5}"#, "{}",
                #"{"kind": "song", "trackId": 2, "trackName": "Two"}"#
            )
        )
        #expect(response.items.map(\.trackName) == ["One", "Two"])
        #expect(response.skipped == 6)
    }

    @Test func onlyWebURLsAreKept() throws {
        let item = try #require(
            try Self.decode(
                appleJSON(
                    #"{"trackName": "x", "previewUrl": "javascript:alert(1)", "trackViewUrl": "/relative/page", "feedUrl": "file:///etc/passwd", "artworkUrl100": "not a url", "artworkUrl60": "HTTP://E.COM/60.jpg"}"#
                )
            ).items.first
        )
        #expect(item.previewURL == nil)
        #expect(item.trackViewURL == nil)
        #expect(item.feedURL == nil)
        #expect(item.artworkURL == URL(string: "HTTP://E.COM/60.jpg"))
    }

    @Test func unreadableFieldsAreDroppedNotFatal() throws {
        let item = try #require(
            try Self.decode(
                appleJSON(
                    #"{"kind": "song", "trackId": "12x", "collectionId": 3.5, "trackName": "Odd", "trackTimeMillis": "long", "trackNumber": {"n": 1}, "releaseDate": "last Tuesday", "country": ["US"]}"#
                )
            ).items.first
        )
        #expect(item == CatalogItem(kind: .song, trackName: "Odd"))
    }

    @Test func anItemWithoutIdsHasAStableHashId() throws {
        let json = appleJSON(
            #"{"kind": "song", "trackName": "No Ids", "artistName": "Someone"}"#,
            #"{"kind": "song", "trackName": "No Ids Either", "artistName": "Someone"}"#
        )
        let first = try Self.decode(json).items
        let again = try Self.decode(json).items
        #expect(first.map(\.id) == again.map(\.id))
        #expect(first[0].id != first[1].id)
        #expect(first.allSatisfy { $0.id.hasPrefix("h") && $0.id.count == 17 })
        // The hash of "song␟Someone␟␟No Ids␟" (SHA-256, first 8 bytes): the same in every process.
        #expect(first[0].id == "h" + Origin.sha256(Data("song\u{1F}Someone\u{1F}\u{1F}No Ids\u{1F}".utf8)).prefix(16))
    }

    @Test(arguments: ["<html><body>Service Unavailable</body></html>", "", "[]", #"{"resultCount": 1, "results": "#])
    func bodiesThatAreNotTheCatalogsJSON(body: String) {
        let error = #expect(throws: FerryError.self) { try Self.decode(Data(body.utf8)) }
        #expect(error?.code == .catalogBadResponse)
    }
}
