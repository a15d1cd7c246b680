import FerryCore
import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Bookmarks through the API: each listener's own, per episode and all together, notes changed,
/// removed, exported, and keeping a gone episode from being forgotten.
@Suite struct BookmarkAPITests {
    @Test func eachListenerKeepsTheirOwnBookmarks() async throws {
        try await Origin.run { origin, base in
            _ = PodcastAPITests.serveMedia(origin)
            origin.serve("/feed.xml", .init(data: PodcastAPITests.feed(base).data))
            let feed = base.appendingPathComponent("feed.xml").absoluteString
            try await HouseholdListeningTests.withHousehold { d, alice, bob in
                let show = try await alice.subscribe(url: feed)
                _ = try await bob.subscribe(url: feed)
                let (first, second) = (show.episodes[0].id, show.episodes[1].id)
                let late = try await alice.addBookmark(episode: first, seconds: 754, note: "  the punchline  ")
                let early = try await alice.addBookmark(episode: first, seconds: 61.5)
                _ = try await alice.addBookmark(episode: second, seconds: 5, note: "   ")
                #expect(late.title == "Episode 3" && late.showTitle == "Test Show" && late.podcastId == show.podcast.id)
                #expect(late.note == "  the punchline  " && early.note == nil)
                // One episode's, by time; all of them, the latest bookmarked item first.
                #expect(try await alice.bookmarks(episode: first).map(\.seconds) == [61.5, 754])
                #expect(try await alice.bookmarks().map(\.mediaId) == [second, first, first])
                #expect(try await alice.bookmarks().first?.note == nil, "a blank note is none")

                // Bob has none of Alice's, and cannot change or remove them.
                #expect(try await bob.bookmarks().isEmpty)
                #expect(try await bob.bookmarks(episode: first).isEmpty)
                await #expect(throws: FerryError.self) { try await bob.updateBookmark(late.id, note: "mine now") }
                await #expect(throws: FerryError.self) { try await bob.deleteBookmark(late.id) }
                #expect(try await alice.bookmarks(episode: first).first { $0.id == late.id }?.note == "  the punchline  ")

                #expect(try await alice.updateBookmark(late.id, note: "better").note == "better")
                #expect(try await alice.updateBookmark(late.id, note: "").note == nil)
                try await alice.deleteBookmark(early.id)
                #expect(try await alice.bookmarks(episode: first).map(\.id) == [late.id])
                await #expect(throws: FerryError.self) { try await alice.deleteBookmark(early.id) }

                // Bad input: a time that is not one, a note too long, no such episode.
                await #expect(throws: FerryError.self) { try await alice.addBookmark(episode: first, seconds: -1) }
                await #expect(throws: FerryError.self) { try await alice.addBookmark(episode: first, seconds: 1, note: String(repeating: "x", count: 1001)) }
                await #expect(throws: FerryError.self) { try await alice.addBookmark(episode: 999_999, seconds: 1) }
                let nan = try await d.raw(.POST, "/v1/episodes/\(first)/bookmarks", body: #"{"seconds": "soon"}"#)
                #expect(nan.status == 400, "\(nan.body)")

                // The JSON export has them, with the subscriptions.
                let export = try await alice.exportLibrary()
                #expect(export.subscriptions.map(\.feedURL) == [feed] && export.bookmarks.map(\.id).contains(late.id))
                #expect(try await bob.exportLibrary().bookmarks.isEmpty)
            }
        }
    }
}
