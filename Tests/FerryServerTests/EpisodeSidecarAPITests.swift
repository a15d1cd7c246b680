import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// An episode's chapters and transcript, fetched by the daemon from the podcast's host; one
/// that is too big or not what it says is refused with a clear error, and the episode still
/// downloads and plays.
@Suite struct EpisodeSidecarAPITests {
    static func feed(_ base: URL, chapters: String, transcript: String) -> Data {
        Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0">
              <channel><title>Sidecars</title>
                <item><title>Good</title><guid>good</guid>
                  <enclosure url="\(base.appendingPathComponent("media/good.mp3").absoluteString)" type="audio/mpeg"/>
                  <podcast:chapters url="\(base.appendingPathComponent(chapters).absoluteString)" type="application/json+chapters"/>
                  <podcast:transcript url="\(base.appendingPathComponent(transcript).absoluteString)" type="text/vtt"/>
                </item>
                <item><title>Bare</title><guid>bare</guid>
                  <enclosure url="\(base.appendingPathComponent("media/good.mp3").absoluteString)" type="audio/mpeg"/>
                </item>
              </channel>
            </rss>
            """.utf8)
    }

    @Test func chaptersAndTranscriptThroughTheDaemon() async throws {
        try await Origin.run { origin, base in
            origin.serve("/media/good.mp3", .init(data: Origin.bytes(10_000), contentType: "audio/mpeg"))
            origin.serve("/chapters.json", .init(data: Data(#"{"version":"1.2.0","chapters":[{"startTime":0,"title":"Intro"},{"startTime":60,"title":"Talk"}]}"#.utf8)))
            origin.serve("/t.vtt", .init(data: Data("WEBVTT\n\n00:00.000 --> 00:02.000\n<v Ada>Hello\n".utf8)))
            origin.serve("/huge.json", .init(data: Data(repeating: UInt8(ascii: " "), count: 3 << 20)))
            origin.serve("/page.html", .init(data: Data("<html><body>Moved</body></html>".utf8), contentType: "text/html"))
            origin.serve("/feed.xml", .init(data: Self.feed(base, chapters: "chapters.json", transcript: "t.vtt")))
            origin.serve("/bad.xml", .init(data: Self.feed(base, chapters: "huge.json", transcript: "page.html")))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let good = try await d.client.subscribe(url: base.appendingPathComponent("feed.xml").absoluteString)
                    let episode = try #require(good.episodes.first { $0.title == "Good" })
                    #expect(try await d.client.chapters(episode: episode.id).map(\.title) == ["Intro", "Talk"])
                    #expect(try await d.client.transcript(episode: episode.id) == [TranscriptCue(startSeconds: 0, endSeconds: 2, speaker: "Ada", text: "Hello")])
                    let bare = try #require(good.episodes.first { $0.title == "Bare" })
                    #expect(try await d.raw(.GET, "/v1/episodes/\(bare.id)/chapters").status == 404)
                    #expect(try await d.raw(.GET, "/v1/episodes/\(bare.id)/transcript").status == 404)

                    let bad = try await d.client.subscribe(url: base.appendingPathComponent("bad.xml").absoluteString)
                    let broken = try #require(bad.episodes.first { $0.title == "Good" })
                    let huge = try await d.raw(.GET, "/v1/episodes/\(broken.id)/chapters")
                    #expect(huge.status == 422 && huge.body.contains("larger than 2 MiB"), "\(huge.body)")
                    let page = try await d.raw(.GET, "/v1/episodes/\(broken.id)/transcript")
                    #expect(page.status == 422 && page.body.contains("not a transcript"), "\(page.body)")
                    // The episode itself is untouched: it downloads and plays.
                    let transfer = try await d.client.downloadEpisode(broken.id, session: "test")
                    try await eventually("downloaded") { try await d.client.transfer(transfer.id).state == .completed }
                    #expect(try await d.raw(.GET, "/v1/episodes/\(broken.id)/file").status == 200)
                }
            }
        }
    }
}
