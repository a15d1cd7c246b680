import FerryKit
import FerryListening
import FerryTestSupport
import Foundation
import Testing

/// The catalog through the daemon: search, preview downloads into Music/, subscribing to a
/// catalog podcast. The catalog is a loopback server with Apple's recorded answers, their media
/// URLs pointed at a loopback origin.
@Suite struct CatalogAPITests {
    /// A recorded response with Apple's media host replaced by the test origin.
    static func fixture(_ name: String, origin base: URL) throws -> String {
        String(decoding: try CatalogServer.fixture(name), as: UTF8.self)
            .replacingOccurrences(of: "https://audio-ssl.itunes.apple.com", with: base.absoluteString)
    }

    @Test func searchDownloadAPreviewAndSeeItDownloaded() async throws {
        try await Origin.run { origin, base in
            let preview = Origin.File(data: Origin.bytes(30_000), contentType: "audio/x-m4a")
            origin.serve("/itunes-assets/AudioPreview114/v4/db/4f/d3/db4fd3e6-412d-336e-87c2-1dbba8d2cc58/mzaf_9168872909681524128.plus.aac.p.m4a", preview)
            let songs = try Self.fixture("search-song-2-results.json", origin: base)
            let one = try JSONSerialization.jsonObject(with: Data(songs.utf8)) as! [String: Any]
            let first = (one["results"] as! [[String: Any]])[0]
            let lookup = String(decoding: try JSONSerialization.data(withJSONObject: ["resultCount": 1, "results": [first]]), as: UTF8.self)
            try await CatalogServer.run { catalog, catalogURL in
                catalog.answer("/search", where: ["media": "music", "entity": "song"], with: .body(songs))
                catalog.answer("/lookup", where: ["id": "1450993693"], with: .body(lookup))
                try await withTemporaryDirectory { home in
                    try await DaemonHarness.run(home: home, catalogBaseURL: catalogURL) { d in
                        let results = try await d.client.search("hello & goodbye #1", limit: 2)
                        #expect(results.map(\.title) == ["Here (In Your Arms)", "Worldwide Treasure! (Instrumental)"])
                        #expect(results[0].artist == "Hellogoodbye")
                        #expect(results[0].durationSeconds == 240.614)
                        #expect(results[0].download == nil)
                        #expect(catalog.requests(for: "/search").last?["term"] == "hello & goodbye #1")

                        let transfer = try await d.client.downloadPreview(trackId: 1_450_993_693, session: "web")
                        try await eventually("downloaded") { try await d.client.transfer(transfer.id).state == .completed }
                        let done = try await d.client.transfer(transfer.id)
                        #expect(done.path == d.paths.library.appendingPathComponent("Music/Hellogoodbye - Here (In Your Arms).m4a").path)
                        #expect(done.sha256 == preview.sha256)
                        // Asking again returns the same transfer.
                        let again = try await d.client.downloadPreview(trackId: 1_450_993_693, session: "web")
                        #expect(again.id == transfer.id)
                        // The track remembers it is downloaded, in new results too.
                        let later = try await d.client.search("hello & goodbye #1", limit: 2)
                        #expect(later[0].download?.state == .completed)
                        #expect(later[0].download?.id == transfer.id)
                        #expect(later[1].download == nil)
                        // Removed from the list (its file stays): gone from the list and the
                        // counts, still downloaded (and playable) for the song.
                        try await d.client.remove(transfer.id)
                        let listed = try await d.client.transfers()
                        #expect(!listed.transfers.contains { $0.id == transfer.id })
                        let counts = try await d.client.status().counts
                        #expect(counts["completed"] == nil)
                        let kept = try await d.client.search("hello & goodbye #1", limit: 2)
                        #expect(kept[0].download?.state == .completed && kept[0].download?.id == transfer.id)
                        #expect(FileManager.default.fileExists(atPath: done.path!))
                        // A downloaded song in Up Next plays from its (hidden) transfer's file.
                        let upNext = try await d.client.setUpNext([.init(kind: .track, id: 1_450_993_693)])
                        #expect(upNext.items.map(\.title) == ["Here (In Your Arms)"] && upNext.items[0].subtitle == "Hellogoodbye")
                        #expect(upNext.items[0].playURL == "/v1/transfers/\(transfer.id)/file")
                        #expect(try await d.raw(.GET, upNext.items[0].playURL!).status == 200)
                        // Where the listener is in the song, shown with it in results.
                        let played = try await d.client.updatePlayback(track: 1_450_993_693, PlaybackUpdate(positionSeconds: 12.25, durationSeconds: 30))
                        #expect(played.positionSeconds == 12.25 && !played.played)
                        let withPlace = try await d.client.search("hello & goodbye #1", limit: 2)
                        #expect(withPlace[0].playback?.positionSeconds == 12.25 && withPlace[1].playback == nil)
                        await #expect(throws: FerryError.self) {
                            try await d.client.updatePlayback(track: 42, PlaybackUpdate(positionSeconds: 1))
                        }
                        let stillThere = try await d.client.downloadPreview(trackId: 1_450_993_693, session: "web")
                        #expect(stillThere.id == transfer.id)
                        #expect(origin.requests(for: "/itunes-assets/AudioPreview114/v4/db/4f/d3/db4fd3e6-412d-336e-87c2-1dbba8d2cc58/mzaf_9168872909681524128.plus.aac.p.m4a").count == 1)
                    }
                }
            }
        }
    }

    @Test func subscribeToACatalogPodcastAndThroughAnApplePodcastsURL() async throws {
        try await Origin.run { origin, base in
            _ = PodcastAPITests.serveMedia(origin)
            origin.serve("/feed.xml", .init(data: PodcastAPITests.feed(base, title: "Beyond Jazz").data))
            let podcast = """
                {"resultCount":1,"results":[{"wrapperType":"track","kind":"podcast","collectionId":337994101,"trackId":337994101,
                "collectionName":"Beyond Jazz","trackName":"Beyond Jazz","artistName":"DJ","feedUrl":"\(base.appendingPathComponent("feed.xml").absoluteString)"}]}
                """
            try await CatalogServer.run { catalog, catalogURL in
                catalog.answer("/search", where: ["media": "podcast"], with: .body(podcast))
                catalog.answer("/lookup", where: ["id": "337994101"], with: .body(podcast))
                try await withTemporaryDirectory { home in
                    try await DaemonHarness.run(home: home, catalogBaseURL: catalogURL) { d in
                        let results = try await d.client.search("beyond jazz", media: "podcast")
                        #expect(results.first?.kind == .podcast)
                        #expect(results.first?.podcastId == nil)
                        let detail = try await d.client.subscribe(catalogId: 337_994_101)
                        #expect(detail.podcast.title == "Beyond Jazz")
                        #expect(detail.episodes.count == 3)
                        let marked = try await d.client.search("beyond jazz", media: "podcast")
                        #expect(marked.first?.podcastId == detail.podcast.id)
                        // The same podcast through its Apple Podcasts page: the same subscription.
                        let viaPage = try await d.client.subscribe(url: "https://podcasts.apple.com/us/podcast/beyond-jazz/id337994101")
                        #expect(viaPage.podcast.id == detail.podcast.id)
                    }
                }
            }
        }
    }

    @Test func catalogFailuresBecomeClearErrors() async throws {
        try await CatalogServer.run { catalog, catalogURL in
            catalog.script("/search", [
                .body(#"{"errorMessage":"Invalid value(s) for key(s): [country]"}"#, status: 400, contentType: "application/json"),
                .body("slow down", status: 403, contentType: "text/html"),
            ])
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home, catalogBaseURL: catalogURL) { d in
                    let bad = try await d.raw(.GET, "/v1/catalog/search?term=x")
                    #expect(bad.status == 400)
                    #expect(bad.body.contains("Invalid value(s)"))
                    let throttled = try await d.raw(.GET, "/v1/catalog/search?term=y")
                    #expect(throttled.status == 429)
                    #expect(throttled.body.contains("catalog_throttled"))
                    let noTerm = try await d.raw(.GET, "/v1/catalog/search")
                    #expect(noTerm.status == 400)
                    let badMedia = try await d.raw(.GET, "/v1/catalog/search?term=x&media=movies")
                    #expect(badMedia.status == 400)
                    let badLimit = try await d.raw(.GET, "/v1/catalog/search?term=x&limit=500")
                    #expect(badLimit.status == 400)
                }
            }
        }
        // No catalog at all.
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let offline = try await d.raw(.GET, "/v1/catalog/search?term=x")
                #expect(offline.status == 502)
                #expect(offline.body.contains("catalog_unreachable"))
            }
        }
    }
}
