import Crypto
import FerryCore
import FerryKit
import FerryListening
import FerryTestSupport
import Foundation
import Testing

/// Podcasting 2.0 used, through the daemon's API against a loopback origin: alternate
/// enclosures as mirrors, `podcast:integrity` as the checksum, `updateFrequency` as the refresh
/// schedule, and the namespace's fields served with the show and its episodes.
@Suite struct PodcastNamespaceAPITests {
    static func item(_ n: Int, enclosure: String, alternate: String) -> String {
        """
        <item><guid>ep-\(n)</guid><title>Episode \(n)</title><pubDate>Wed, 0\(n) May 2024 10:00:00 +0000</pubDate>
        <enclosure url="\(enclosure)" type="audio/mpeg" length="20000"/>
        <podcast:person role="guest" href="https://people.example/ann">Ann \(n)</podcast:person>
        <podcast:season name="First">1</podcast:season><podcast:soundbite startTime="3" duration="7">The bit</podcast:soundbite>
        \(alternate)
        </item>
        """
    }

    static func feed(_ items: [String], frequency: String = "") -> Data {
        Data("""
            <?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel>
            <title>Namespace Show</title><podcast:medium>music</podcast:medium><podcast:locked owner="me@example.org">yes</podcast:locked>
            <podcast:funding url="https://fund.example/">Support us</podcast:funding>\(frequency)
            <podcast:podroll><podcast:remoteItem feedGuid="917393e3-1b1e-5cef-ace4-edaa54e1f810" feedUrl="https://feeds.podcastindex.org/pc20.xml"/></podcast:podroll>
            \(items.joined(separator: "\n"))
            </channel></rss>
            """.utf8)
    }

    static func sri(_ data: Data) -> String { "sha384-" + Data(SHA384.hash(data: data)).base64EncodedString() }

    @Test func alternateEnclosuresAreMirrorsAndTheirIntegrityTheChecksum() async throws {
        try await Origin.run { origin, base in
            let good = Origin.File(data: Origin.bytes(20_000, seed: 1), contentType: "audio/mpeg")
            let other = Origin.File(data: Origin.bytes(20_000, seed: 2), contentType: "audio/mpeg")
            origin.serve("/mirror/ep1.mp3", good)
            origin.serve("/media/ep2.mp3", other)
            origin.serve("/media/ep3.mp3", good)
            let missing = base.appendingPathComponent("missing/ep1.mp3").absoluteString
            let items = [
                // The enclosure is gone (404); its alternate lists a mirror and the file's sha384.
                Self.item(1, enclosure: missing, alternate: """
                    <podcast:alternateEnclosure type="audio/mpeg" default="true"><podcast:source uri="\(missing)"/>
                    <podcast:source uri="\(base.appendingPathComponent("mirror/ep1.mp3").absoluteString)"/><podcast:source uri="ipfs://QmNotHere"/>
                    <podcast:integrity type="sri" value="\(Self.sri(good.data))"/></podcast:alternateEnclosure>
                    """),
                // The integrity is another file's: the download fails and nothing is placed.
                Self.item(2, enclosure: base.appendingPathComponent("media/ep2.mp3").absoluteString, alternate: """
                    <podcast:alternateEnclosure type="audio/mpeg" default="true"><podcast:integrity type="sri" value="\(Self.sri(good.data))"/></podcast:alternateEnclosure>
                    """),
                // A malformed SRI is no checksum: the episode still downloads.
                Self.item(3, enclosure: base.appendingPathComponent("media/ep3.mp3").absoluteString, alternate: """
                    <podcast:alternateEnclosure type="audio/mpeg" default="true"><podcast:integrity type="sri" value="sha384-not!base64"/></podcast:alternateEnclosure>
                    """),
            ]
            origin.serve("/feed.xml", .init(data: Self.feed(items), contentType: "application/rss+xml"))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let detail = try await d.client.subscribe(url: base.appendingPathComponent("feed.xml").absoluteString)
                    // The namespace's fields come with the show and its episodes.
                    let show = try #require(detail.podcast.podcasting)
                    #expect(show.medium == "music" && show.locked == true && show.funding.first?.url == "https://fund.example/")
                    #expect(show.podroll.first?.feedURL == "https://feeds.podcastindex.org/pc20.xml")
                    let episodes = Dictionary(uniqueKeysWithValues: detail.episodes.map { ($0.title, $0) })
                    let first = try #require(episodes["Episode 1"])
                    #expect(first.podcasting?.persons.first?.name == "Ann 1" && first.podcasting?.persons.first?.role == "guest")
                    #expect(first.podcasting?.seasonName == "First" && first.podcasting?.soundbites.first?.duration == 7)

                    let mirrored = try await d.client.downloadEpisode(first.id, session: "test")
                    try await eventually("the mirror's copy") { try await d.client.transfer(mirrored.id).state == .completed }
                    let done = try await d.client.transfer(mirrored.id)
                    #expect(done.verifiedBy?.contains("checksum sha-384") == true, "\(String(describing: done.verifiedBy))")
                    #expect(origin.requests(for: "/missing/ep1.mp3").count >= 1 && origin.requests(for: "/mirror/ep1.mp3").count >= 1)
                    #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(done.path))).sha256Hex == good.sha256)

                    let wrong = try await d.client.downloadEpisode(try #require(episodes["Episode 2"]).id, session: "test")
                    try await eventually("the mismatch") { try await d.client.transfer(wrong.id).state == .failed }
                    let failed = try await d.client.transfer(wrong.id)
                    #expect(failed.error?.code == "checksum_mismatch", "\(String(describing: failed.error))")
                    let folder = d.paths.library.appendingPathComponent("Podcasts/Namespace Show")
                    let placed = try FileManager.default.contentsOfDirectory(atPath: folder.path)
                    #expect(!placed.contains { $0.contains("Episode 2") }, "nothing placed: \(placed)")

                    let plain = try await d.client.downloadEpisode(try #require(episodes["Episode 3"]).id, session: "test")
                    try await eventually("the unchecked one") { try await d.client.transfer(plain.id).state == .completed }
                    let kept = try await d.client.transfer(plain.id)
                    #expect(kept.checksum == nil && !(kept.verifiedBy ?? []).contains { $0.hasPrefix("checksum") })
                }
            }
        }
    }

    /// A podcast that chose "smallest audio" downloads the alternate that is, named by its type and
    /// checked by its own integrity; the choice is kept, shown, and can go back to the feed's file.
    @Test func aPodcastsChoiceOfFilesTakesTheSmallestAudio() async throws {
        try await Origin.run { origin, base in
            let big = Origin.File(data: Origin.bytes(40_000, seed: 3), contentType: "audio/mpeg")
            let small = Origin.File(data: Origin.bytes(12_000, seed: 4), contentType: "audio/opus")
            origin.serve("/media/ep1.mp3", big)
            origin.serve("/media/ep1.opus", small)
            let enclosure = base.appendingPathComponent("media/ep1.mp3").absoluteString
            let item = Self.item(1, enclosure: enclosure, alternate: """
                <podcast:alternateEnclosure type="audio/mpeg" bitrate="128000" default="true"><podcast:source uri="\(enclosure)"/></podcast:alternateEnclosure>
                <podcast:alternateEnclosure type="audio/opus" bitrate="32000" length="12000"><podcast:source uri="\(base.appendingPathComponent("media/ep1.opus").absoluteString)"/>
                <podcast:integrity type="sri" value="\(Self.sri(small.data))"/></podcast:alternateEnclosure>
                """)
            origin.serve("/feed.xml", .init(data: Self.feed([item]), contentType: "application/rss+xml"))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let detail = try await d.client.subscribe(url: base.appendingPathComponent("feed.xml").absoluteString)
                    #expect(detail.podcast.enclosureChoice == nil)
                    let chosen = try await d.client.updatePodcast(detail.podcast.id, PodcastSettings(enclosureChoice: .smallestAudio))
                    #expect(chosen.podcast.enclosureChoice == .smallestAudio)
                    #expect(try await d.client.podcast(detail.podcast.id).podcast.enclosureChoice == .smallestAudio)
                    let transfer = try await d.client.downloadEpisode(detail.episodes[0].id, session: "test")
                    try await eventually("the small file") { try await d.client.transfer(transfer.id).state == .completed }
                    let done = try await d.client.transfer(transfer.id)
                    #expect(done.url.hasSuffix("/media/ep1.opus") && done.path?.hasSuffix("Episode 1.opus") == true, "\(done.url) \(String(describing: done.path))")
                    #expect(done.verifiedBy?.contains("checksum sha-384") == true, "\(String(describing: done.verifiedBy))")
                    #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(done.path))).sha256Hex == small.sha256)
                    #expect(origin.requests(for: "/media/ep1.mp3").isEmpty, "the big file is not fetched")
                    // Back to the feed's file; a choice that is none is refused.
                    #expect(try await d.client.updatePodcast(detail.podcast.id, PodcastSettings(enclosureChoice: .feed)).podcast.enclosureChoice == nil)
                    let bad = try await d.raw(.PATCH, "/v1/podcasts/\(detail.podcast.id)", body: #"{"enclosureChoice": "tiniest"}"#)
                    #expect(bad.status == 400, "\(bad.body)")
                }
            }
        }
    }

    /// A Podping relay's notice fetches a subscribed feed at once (once a minute at most); URLs
    /// of no subscription are named; a member may not ping; a ping of nothing is refused.
    @Test func aPingFetchesTheFeedAtOnce() async throws {
        try await Origin.run { origin, base in
            origin.serve("/feed.xml", .init(data: Self.feed([], frequency: #"<podcast:podping usesPodping="true"/>"#), etag: "\"v1\"", contentType: "application/rss+xml"))
            let feed = base.appendingPathComponent("feed.xml").absoluteString
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let show = try await d.client.subscribe(url: feed)
                    #expect(show.podcast.podcasting?.usesPodping == true)
                    origin.serve("/feed.xml", .init(data: Self.feed([Self.item(1, enclosure: base.appendingPathComponent("a.mp3").absoluteString, alternate: "")]),
                                                    etag: "\"v2\"", contentType: "application/rss+xml"))
                    let fetches = origin.requests(for: "/feed.xml").count
                    let body = try await d.raw(.POST, "/v1/podcasts/ping", body: #"{"urls": ["\#(feed)", "https://elsewhere.example/feed.xml"]}"#)
                    #expect(body.status == 200, "\(body.body)")
                    let answer = try JSONDecoder().decode(FeedPingResponse.self, from: Data(body.body.utf8))
                    #expect(answer.refreshed == [show.podcast.id] && answer.unknown == ["https://elsewhere.example/feed.xml"])
                    #expect(origin.requests(for: "/feed.xml").count == fetches + 1)
                    #expect(try await d.client.podcast(show.podcast.id).episodes.map(\.title) == ["Episode 1"])
                    // The same ping again within the minute: not fetched again.
                    let again = try await d.raw(.POST, "/v1/podcasts/ping?url=\(feed.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")")
                    #expect(try JSONDecoder().decode(FeedPingResponse.self, from: Data(again.body.utf8)).skipped == [show.podcast.id], "\(again.body)")
                    #expect(origin.requests(for: "/feed.xml").count == fetches + 1)
                    #expect(try await d.raw(.POST, "/v1/podcasts/ping", body: #"{"urls": []}"#).status == 400)
                    #expect(try await d.raw(.POST, "/v1/podcasts/ping", body: #"{"urls": 3}"#).status == 400)
                    _ = try await d.client.addUser("mia", password: "mia's password")
                    let member = DaemonClient(baseURL: d.baseURL, token: try await d.client.makeUserToken("mia").token)
                    await #expect(throws: FerryError.self) { try await member.pingFeeds([feed]) }
                }
            }
        }
    }

    /// A show that says it publishes weekly on one day is fetched around that day, not hourly.
    @Test func aWeeklyShowIsNotFetchedAgainForDays() async throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let start = Date()
        // The day three days from now: never inside its window (6 hours before it begins) today.
        let publishingDay = calendar.startOfDay(for: start.addingTimeInterval(3 * 86_400))
        let code = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"][calendar.component(.weekday, from: publishingDay) - 1]
        try await Origin.run { origin, base in
            let frequency = #"<podcast:updateFrequency rrule="FREQ=WEEKLY;BYDAY=\#(code)">Weekly</podcast:updateFrequency>"#
            origin.serve("/weekly.xml", .init(data: Self.feed([], frequency: frequency)))
            origin.serve("/plain.xml", .init(data: Self.feed([])))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    _ = try await d.client.subscribe(url: base.appendingPathComponent("weekly.xml").absoluteString)
                    _ = try await d.client.subscribe(url: base.appendingPathComponent("plain.xml").absoluteString)
                    let refresher = PodcastRefresher(podcasts: d.daemon.podcasts, interval: .seconds(3600), logger: testLogger("refresher"))
                    func fetches() -> [Int] { [origin.requests(for: "/weekly.xml").count, origin.requests(for: "/plain.xml").count] }
                    #expect(fetches() == [1, 1])
                    let next = await refresher.refreshDue(now: start.addingTimeInterval(2 * 3600))
                    #expect(fetches() == [1, 2], "the plain feed hourly, the weekly one not")
                    #expect(next < start.addingTimeInterval(4 * 3600))
                    await refresher.refreshDue(now: start.addingTimeInterval(30 * 3600))
                    #expect(fetches()[0] == 1, "still not, a day later")
                    await refresher.refreshDue(now: publishingDay.addingTimeInterval(-6 * 3600 + 60))
                    #expect(fetches()[0] == 2, "fetched as its day comes")
                }
            }
        }
    }
}
