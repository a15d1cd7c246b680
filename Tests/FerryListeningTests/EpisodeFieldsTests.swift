import FerryCore
import FerryFeeds
import FerryKit
import Foundation
import GRDB
import Testing

@testable import FerryListening

/// An episode's fields are declared once (`EpisodeFields`) and kept flat where they always were:
/// one column each in the `episode` table, one key each in the API's JSON.
@Suite struct EpisodeFieldsTests {
    static let feedEpisode = FeedEpisode(
        guid: "urn:g1", title: "Pilot", published: Date(timeIntervalSince1970: 1_700_000_000), duration: 1834.5,
        enclosures: [.init(url: "https://x.example/a.mp3", length: 12_345, type: "audio/mpeg")],
        descriptionHTML: "<p>Notes</p>", descriptionText: "Notes", season: 2, episodeNumber: 7, episodeType: .bonus, explicit: true,
        link: "https://x.example/1", artworkURL: "https://x.example/1.jpg", chaptersURL: "https://x.example/1.json",
        transcripts: [.init(url: "https://x.example/1.vtt", type: "text/vtt")]
    )

    @Test func everyFieldHasItsColumnAndReadsBackTheSame() async throws {
        let journal = try SQLiteJournal.inMemory(tables: [.listening])
        let store = SQLiteListeningStore(journal)
        let podcast = try await store.insertPodcast(PodcastRecord(feedURL: "https://x.example/feed", title: "X", folder: "Podcasts/X")).record
        _ = try await store.mergeEpisodes(podcastId: podcast.podcastId, [Self.feedEpisode], markNew: true)
        let episode = try #require(try await store.episodes(podcastId: podcast.podcastId).first)
        #expect(episode.fields == Self.feedEpisode.fields)
        #expect(episode.fields.transcriptURL == "https://x.example/1.vtt" && episode.episodeType == "bonus")

        let columns = try await journal.writer.read { db in try db.columns(in: "episode").map(\.name) }
        #expect(Set(try episode.databaseDictionary.keys) == Set(columns))
        let stored = try #require(try await journal.writer.read { db in try Row.fetchOne(db, sql: "SELECT * FROM episode") })
        let duration: Double? = stored["duration"]
        let enclosure: String? = stored["enclosureURL"]
        let season: Int? = stored["season"]
        #expect(duration == 1834.5)
        #expect(enclosure == "https://x.example/a.mp3")
        #expect(season == 2)
    }

    @Test func theAPIsJSONKeepsItsKeys() throws {
        let episode = Episode(id: 3, podcastId: 1, fields: Self.feedEpisode.fields, isNew: true, state: .downloaded, path: "/lib/a.mp3")
        let data = try JSONEncoder().encode(episode)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == [
            "id", "podcastId", "guid", "title", "published", "durationSeconds", "enclosureURL", "enclosureLength", "enclosureType",
            "descriptionHTML", "descriptionText", "season", "episodeNumber", "episodeType", "explicit", "link", "artworkURL",
            "chaptersURL", "transcriptURL", "isNew", "state", "path",
        ])
        #expect(object["durationSeconds"] as? Double == 1834.5)
        #expect(try JSONDecoder().decode(Episode.self, from: data) == episode)
        #expect(episode.durationSeconds == 1834.5 && episode.title == "Pilot")

        // Fields a feed does not give are left out, as before.
        let bare = Episode(id: 4, podcastId: 1, guid: "g", title: "")
        let keys = try #require(try JSONSerialization.jsonObject(with: try JSONEncoder().encode(bare)) as? [String: Any]).keys
        #expect(Set(keys) == ["id", "podcastId", "guid", "title", "isNew", "state"])
    }
}
