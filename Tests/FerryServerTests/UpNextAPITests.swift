import FerryCore
import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Up Next and deleting one episode's file, through the daemon's API.
@Suite struct UpNextAPITests {
    @Test func upNextKeepsItsOrderAndSaysWhereEachPlaysFrom() async throws {
        try await Origin.run { origin, base in
            _ = PodcastAPITests.serveMedia(origin)
            origin.serve("/feed.xml", .init(data: PodcastAPITests.feed(base).data))
            try await withTemporaryDirectory { home in
                let (podcast, kept) = try await DaemonHarness.run(home: home) { d in
                    let detail = try await d.client.subscribe(url: base.appendingPathComponent("feed.xml").absoluteString)
                    let ids = Dictionary(uniqueKeysWithValues: detail.episodes.map { ($0.title, $0.id) })
                    let (one, two, three) = (ids["Episode 1"]!, ids["Episode 2"]!, ids["Episode 3"]!)
                    let transfer = try await d.client.downloadEpisode(three, session: "test")
                    try await eventually("downloaded") { try await d.client.transfer(transfer.id).state == .completed }
                    #expect(try await d.client.upNext().items.isEmpty)

                    // The same episode twice keeps its first place.
                    let list = try await d.client.setUpNext([.init(kind: .episode, id: three), .init(kind: .episode, id: one), .init(kind: .episode, id: three)])
                    #expect(list.items.map(\.id) == [three, one])
                    #expect(list.items.map(\.title) == ["Episode 3", "Episode 1"])
                    #expect(list.items.allSatisfy { $0.subtitle == "Test Show" && $0.kind == .episode && $0.podcastId == detail.podcast.id })
                    _ = try await d.client.updatePodcast(detail.podcast.id, PodcastSettings(playbackSpeed: 1.5))
                    #expect(try await d.client.upNext().items.allSatisfy { $0.playbackSpeed == 1.5 })
                    #expect(list.items[0].playURL == "/v1/episodes/\(three)/file")
                    #expect(list.items[1].playURL == "/v1/episodes/\(one)/stream")
                    _ = try await d.client.updatePlayback(episode: one, PlaybackUpdate(positionSeconds: 42))
                    #expect(try await d.client.upNext().items[1].playback?.positionSeconds == 42)
                    let played = try await d.raw(.GET, list.items[0].playURL!)
                    #expect(played.status == 200)

                    // Refused whole: an unknown episode or song, a bad kind, too long a list.
                    let unknown = try await d.raw(.PUT, "/v1/up-next", body: #"{"items": [{"kind": "episode", "id": \#(two)}, {"kind": "episode", "id": 999999}]}"#)
                    #expect(unknown.status == 404 && unknown.body.contains("no episode 999999"), "\(unknown.body)")
                    let song = try await d.raw(.PUT, "/v1/up-next", body: #"{"items": [{"kind": "track", "id": 5}]}"#)
                    #expect(song.status == 404 && song.body.contains("download its preview first"), "\(song.body)")
                    let kind = try await d.raw(.PUT, "/v1/up-next", body: #"{"items": [{"kind": "video", "id": 1}]}"#)
                    #expect(kind.status == 400, "\(kind.body)")
                    let many = (1...501).map { #"{"kind": "episode", "id": \#($0)}"# }.joined(separator: ",")
                    let long = try await d.raw(.PUT, "/v1/up-next", body: #"{"items": [\#(many)]}"#)
                    #expect(long.status == 400 && long.body.contains("at most 500"), "\(long.body)")
                    #expect(try await d.client.upNext().items.map(\.id) == [three, one])

                    // Deleting the file: gone from disk, the episode stays and streams instead.
                    let path = try #require(try await d.client.podcast(detail.podcast.id).episodes.first { $0.id == three }?.path)
                    let deleted = try await d.client.deleteEpisodeFile(three)
                    #expect(deleted.state == .notDownloaded && deleted.path == nil)
                    #expect(!FileManager.default.fileExists(atPath: path))
                    #expect(try await d.client.upNext().items[0].playURL == "/v1/episodes/\(three)/stream")
                    let again = try await d.raw(.DELETE, "/v1/episodes/\(three)/file")
                    #expect(again.status == 404 && again.body.contains("no file to delete"), "\(again.body)")
                    #expect(try await d.raw(.GET, "/v1/episodes/\(three)/file").status == 404)

                    return (detail.podcast.id, [three, one])
                }
                // Kept across a restart; an unsubscribed podcast's episodes leave it.
                try await DaemonHarness.run(home: home) { d in
                    #expect(try await d.client.upNext().items.map(\.id) == kept)
                    try await d.client.unsubscribe(podcast)
                    #expect(try await d.client.upNext().items.isEmpty)
                }
            }
        }
    }
}
