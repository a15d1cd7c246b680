import FerryCore
import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Searching what was said, through the daemon against a loopback origin: a show of 2,000
/// episodes whose transcripts the daemon fetches and indexes by itself, found by word and
/// phrase with the second to play from, for its subscribers only; a transcript that is not one
/// is kept as failed with its reason, and its episode still plays.
@Suite struct TranscriptSearchAPITests {
    static let count = 2_000
    static let guest = 1_234

    /// Episode `n`'s WebVTT: a line every 15 seconds; episode 1234's guest says "quasar" at 12:34.
    static func transcript(_ n: Int) -> Data {
        var text = "WEBVTT\n\n"
        for line in 0...40 {
            let start = line * 15
            let words = n == guest && line == 40 ? "<v Vera Rubin>Our guest said the word Quasar, twice." : "<v Host>Line \(line) of show \(n) about topic\(n % 50) and the weather."
            text += String(format: "%02d:%02d:%02d.000 --> %02d:%02d:%02d.000\n", start / 3600, start / 60 % 60, start % 60, (start + 15) / 3600, (start + 15) / 60 % 60, (start + 15) % 60)
            text += words + "\n\n"
        }
        return Data(text.utf8)
    }

    @Test func twoThousandEpisodesIndexedAndSearchedPerListener() async throws {
        try await Origin.run { origin, base in
            origin.serve("/media/ep.mp3", Origin.File(data: Origin.bytes(20_000, seed: 1), contentType: "audio/mpeg"))
            for n in 1...Self.count where n > 2 { origin.serve("/t/\(n).vtt", .init(data: Self.transcript(n), contentType: "text/vtt")) }
            // Episode 1 names a transcript that is an error page; episode 2's is missing.
            origin.serve("/t/1.vtt", .init(data: Data("<html><body><p>Not found</p></body></html>".utf8), contentType: "text/vtt"))
            let items = (1...Self.count).map { n in
                """
                <item><guid>ep-\(n)</guid><title>Show \(n)</title><enclosure url="\(base.appendingPathComponent("media/ep.mp3").absoluteString)" type="audio/mpeg" length="20000"/>
                <podcast:transcript url="\(base.appendingPathComponent("t/\(n).vtt").absoluteString)" type="text/vtt"/></item>
                """
            }
            origin.serve("/feed.xml", .init(data: Data("""
                <?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>Big Show</title>
                \(items.joined(separator: "\n"))
                </channel></rss>
                """.utf8), contentType: "application/rss+xml"))
            let feed = base.appendingPathComponent("feed.xml").absoluteString
            try await HouseholdListeningTests.withHousehold { d, alice, bob in
                let show = try await alice.subscribe(url: feed)
                #expect(show.episodes.count == Self.count)
                try await eventually("every transcript indexed or failed", timeout: .seconds(240), poll: .milliseconds(500)) {
                    try await alice.searchTranscripts("weather", limit: 1).index.pending == 0
                }
                let search = try await alice.searchTranscripts("QUASAR")
                #expect(search.index == TranscriptIndexStatus(indexed: Self.count - 2, pending: 0, failed: 2))
                let hit = try #require(search.hits.first)
                #expect(search.hits.count == 1 && hit.episodeTitle == "Show \(Self.guest)" && hit.podcastTitle == "Big Show")
                #expect(hit.seconds == 600 && hit.speaker == "Vera Rubin", "the line's start")
                #expect(hit.snippet.filter(\.match).map(\.text) == ["Quasar"] && hit.snippet.map(\.text).joined() == "Our guest said the word Quasar, twice.")
                // A phrase in its order; every word in one line; one podcast's; a common word's hits capped.
                #expect(try await alice.searchTranscripts(#""guest said""#).hits.map(\.seconds) == [600])
                #expect(try await alice.searchTranscripts(#""said guest""#).hits.isEmpty)
                #expect(try await alice.searchTranscripts("quasar weather").hits.isEmpty)
                #expect(try await alice.searchTranscripts("topic7 \"line 3\"", podcast: show.podcast.id).hits.count == 40)
                #expect(try await alice.searchTranscripts("weather", limit: 200).hits.count == 200)

                // Bob is not subscribed: nothing of Alice's show, until he is.
                let his = try await bob.searchTranscripts("quasar")
                #expect(his.hits.isEmpty && his.index == TranscriptIndexStatus(indexed: 0, pending: 0, failed: 0))
                _ = try await bob.subscribe(url: feed)
                #expect(try await bob.searchTranscripts("quasar").hits.map(\.episodeTitle) == ["Show \(Self.guest)"])

                // What cannot be read was fetched once, and its episode still plays.
                #expect(origin.requests(for: "/t/1.vtt").count == 1 && origin.requests(for: "/t/2.vtt").count == 1)
                let broken = try #require(show.episodes.first { $0.title == "Show 1" })
                #expect(try await d.raw(.GET, "/v1/episodes/\(broken.id)/stream").status == 200)
                let shown = try await d.raw(.GET, "/v1/episodes/\(broken.id)/transcript")
                #expect(shown.status == 422 && shown.body.contains("not a transcript Ferry can read"), "\(shown.body)")

                // Bad searches: a clear 400.
                for query in ["", "%21%21%21", String(repeating: "x", count: 201)] {
                    let answer = try await d.raw(.GET, "/v1/transcripts/search?q=\(query)")
                    #expect(answer.status == 400 && answer.body.contains("invalid_request"), "\(query): \(answer.body)")
                }
                #expect(try await d.raw(.GET, "/v1/transcripts/search").status == 400)
                #expect(try await d.raw(.GET, "/v1/transcripts/search?q=x&limit=0").status == 400)
                #expect(try await d.raw(.GET, "/v1/transcripts/search?q=x&podcast=abc").status == 400)
            }
        }
    }
}
