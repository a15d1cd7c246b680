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

extension EpisodeSidecarAPITests {
    /// An episode streamed from its host before it is downloaded: through a redirect, with the
    /// player's Range; what is not audio goes out as bytes; a host that refuses says so.
    @Test func anEpisodeStreamsBeforeItIsDownloaded() async throws {
        let media = Origin.File(data: Origin.bytes(200_000), contentType: "audio/mpeg")
        try await Origin.run { origin, base in
            origin.serve("/cdn/good.mp3", media)
            origin.redirect("/media/good.mp3", to: base.appendingPathComponent("cdn/good.mp3").absoluteString)
            origin.serve("/page.html", .init(data: Data("<html><script>alert(1)</script></html>".utf8), contentType: "text/html"))
            let feed = """
                <?xml version="1.0" encoding="UTF-8"?>
                <rss version="2.0"><channel><title>Streams</title>
                  <item><title>Good</title><guid>good</guid><enclosure url="\(base.appendingPathComponent("media/good.mp3").absoluteString)" type="audio/mpeg"/></item>
                  <item><title>Page</title><guid>page</guid><enclosure url="\(base.appendingPathComponent("page.html").absoluteString)" type="audio/mpeg"/></item>
                  <item><title>Gone</title><guid>gone</guid><enclosure url="\(base.appendingPathComponent("gone.mp3").absoluteString)" type="audio/mpeg"/></item>
                  <item><title>Words</title><guid>words</guid><description>No media here.</description></item>
                </channel></rss>
                """
            origin.serve("/feed.xml", .init(data: Data(feed.utf8)))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let detail = try await d.client.subscribe(url: base.appendingPathComponent("feed.xml").absoluteString)
                    let id = { (title: String) in detail.episodes.first { $0.title == title }!.id }
                    let whole = try await d.raw(.GET, "/v1/episodes/\(id("Good"))/stream")
                    #expect(whole.status == 200 && whole.headers.first(name: "Content-Length") == "200000")
                    #expect(whole.headers.first(name: "Content-Type") == "audio/mpeg")
                    let part = try await d.raw(.GET, "/v1/episodes/\(id("Good"))/stream", headers: [("Range", "bytes=100000-100009")])
                    #expect(part.status == 206 && part.headers.first(name: "Content-Range") == "bytes 100000-100009/200000")
                    #expect(origin.requests(for: "/cdn/good.mp3").last?.range == "bytes=100000-100009")
                    let page = try await d.raw(.GET, "/v1/episodes/\(id("Page"))/stream")
                    #expect(page.headers.first(name: "Content-Type") == "application/octet-stream")
                    #expect(page.headers.first(name: "X-Content-Type-Options") == "nosniff")
                    let gone = try await d.raw(.GET, "/v1/episodes/\(id("Gone"))/stream")
                    #expect(gone.status == 422 && gone.body.contains("404"), "\(gone.body)")
                    #expect(try await d.raw(.GET, "/v1/episodes/\(id("Words"))/stream").status == 400)
                    #expect(try await d.raw(.GET, "/v1/episodes/999999/stream").status == 404)
                    #expect(try await d.raw(.GET, "/v1/episodes/\(id("Good"))/stream", authorized: false).status == 401)
                    // Nothing was downloaded by listening.
                    #expect(try await d.client.transfers().transfers.isEmpty)
                }
            }
        }
    }
}
