import FerryKit
import Foundation
import Testing

@testable import FerryServer

/// The episode-at-a-time encoder must write exactly what JSONEncoder writes of the whole detail.
@Suite struct PodcastDetailJSONTests {
    static let date = Date(timeIntervalSince1970: 1_763_800_000.25)

    static let podcast = Podcast(
        id: 3, feedURL: "https://example.com/feed.xml?a=1&b=\"2\"", title: "Ünïcode / \"show\"", author: "Tab\there",
        descriptionText: "Line\nbreak", descriptionHTML: "<p>a &amp; b</p>", artworkURL: "https://example.com/a.jpg",
        link: nil, folder: "Podcasts/Show", autoDownload: 2, keepLatest: nil, episodeCount: 2, newCount: 1,
        downloadedCount: 1, refreshedAt: date, error: TransferErrorInfo(code: "feed_invalid", message: "bad \u{1}")
    )

    /// Every field set, with text that needs escaping, and a transfer inside.
    static let full = Episode(
        id: 10, podcastId: 3, guid: "guid/1", title: "Episode \"1\" 🎧", published: date, durationSeconds: 3600.5,
        enclosureURL: "https://cdn.example.com/1.mp3", enclosureLength: 12_345_678, enclosureType: "audio/mpeg",
        descriptionHTML: "<p>notes</p>", descriptionText: "notes\r\n", season: 2, episodeNumber: 7, episodeType: "full",
        explicit: false, link: "https://example.com/1", artworkURL: "https://example.com/1.jpg",
        chaptersURL: "https://example.com/1.json", transcriptURL: "https://example.com/1.vtt", isNew: true,
        state: .downloaded,
        transfer: Transfer(id: 5, url: "https://cdn.example.com/1.mp3", session: "podcasts", state: .completed, createdAt: date, updatedAt: date),
        path: "/lib/Podcasts/Show/1.mp3"
    )

    /// Only what is always there.
    static let bare = Episode(id: 11, podcastId: 3, guid: "g2", title: "")

    @Test(arguments: [[Self.full], [Self.bare], [Self.bare, Self.full, Self.bare], []])
    func matchesJSONEncoder(_ episodes: [Episode]) throws {
        let detail = PodcastDetail(podcast: Self.podcast, episodes: episodes)
        let expected = String(decoding: try FerryJSON.encoder().encode(detail), as: UTF8.self)
        let written = String(buffer: try PodcastDetailJSON.encode(detail))
        #expect(written == expected)
    }
}
