import FerryCore
import FerryKit
import FerryListening
import FerryTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

/// Podcasts through the daemon's API, against feeds and media on a loopback origin.
@Suite struct PodcastAPITests {
    static func feed(_ base: URL, title: String = "Test Show", count: Int = 3, newFeedURL: String? = nil) -> TestFeed {
        TestFeed(
            title: title,
            items: (1...count).reversed().map { n in
                TestFeed.Item(
                    guid: "ep-\(n)", title: "Episode \(n)", published: "Wed, 0\(n) May 2024 10:00:00 +0000",
                    enclosure: base.appendingPathComponent("media/ep\(n).mp3").absoluteString
                )
            },
            newFeedURL: newFeedURL
        )
    }

    static func serveMedia(_ origin: Origin, count: Int = 3) -> [Origin.File] {
        (1...count).map { n in
            let file = Origin.File(data: Origin.bytes(20_000 + n, seed: UInt64(n)), contentType: "audio/mpeg")
            origin.serve("/media/ep\(n).mp3", file)
            return file
        }
    }

    @Test func subscribeRefreshDownloadEndToEnd() async throws {
        try await Origin.run { origin, base in
            let media = Self.serveMedia(origin)
            origin.serve("/feed.xml", .init(data: Self.feed(base).data, etag: "\"feed-v1\"", contentType: "application/rss+xml"))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let detail = try await d.client.subscribe(url: base.appendingPathComponent("feed.xml").absoluteString)
                    #expect(detail.podcast.title == "Test Show")
                    #expect(detail.podcast.author == "Test Author")
                    #expect(detail.podcast.folder == "Podcasts/Test Show")
                    #expect(detail.episodes.map(\.title) == ["Episode 3", "Episode 2", "Episode 1"])
                    #expect(detail.episodes.allSatisfy { $0.state == .notDownloaded })
                    #expect(detail.episodes[0].durationSeconds == 754)

                    // A refresh is a conditional GET; the unchanged feed answers 304.
                    let refreshed = try await d.client.refreshPodcasts(detail.podcast.id)
                    #expect(refreshed.newEpisodes == 0)
                    #expect(origin.requests(for: "/feed.xml").last?.ifNoneMatch == "\"feed-v1\"")

                    // Download an episode: it lands in the podcast's folder, named after it.
                    let episode = detail.episodes[1]
                    let transfer = try await d.client.downloadEpisode(episode.id, session: "test")
                    try await eventually("downloaded") { try await d.client.transfer(transfer.id).state == .completed }
                    let after = try await d.client.podcast(detail.podcast.id)
                    let downloaded = try #require(after.episodes.first { $0.id == episode.id })
                    #expect(downloaded.state == .downloaded)
                    #expect(downloaded.path == d.paths.library.appendingPathComponent("Podcasts/Test Show/2024-05-02 Episode 2.mp3").path)
                    #expect(try Data(contentsOf: URL(fileURLWithPath: downloaded.path!)).sha256Hex == media[1].sha256)
                    #expect(after.podcast.downloadedCount == 1)
                    // Never the same episode twice.
                    let again = try await d.client.downloadEpisode(episode.id, session: "test")
                    #expect(again.id == transfer.id)
                    // Where the listener is, saved by the daemon and shown with the episode.
                    let saved = try await d.client.updatePlayback(episode: episode.id, PlaybackUpdate(positionSeconds: 312.5, durationSeconds: 754))
                    #expect(saved.positionSeconds == 312.5 && !saved.played)
                    let resumed = try await d.client.podcast(detail.podcast.id).episodes.first { $0.id == episode.id }
                    #expect(resumed?.playback?.positionSeconds == 312.5)
                    // Read alone (a browser back online compares it with what it saved offline).
                    let read = try await d.raw(.GET, "/v1/episodes/\(episode.id)/playback")
                    #expect(read.status == 200 && read.body.contains(#""positionSeconds":312.5"#) && read.body.contains("updatedAt"), "\(read.body)")
                    #expect(try await d.raw(.GET, "/v1/episodes/\(detail.episodes[0].id)/playback").status == 204)
                    #expect(try await d.client.updatePlayback(episode: episode.id, PlaybackUpdate(positionSeconds: 740, durationSeconds: 754)).played)
                    #expect(try await !d.client.updatePlayback(episode: episode.id, PlaybackUpdate(played: false)).played)
                    await #expect(throws: FerryError.self) {
                        try await d.client.updatePlayback(episode: episode.id, PlaybackUpdate(positionSeconds: -4))
                    }
                    await #expect(throws: FerryError.self) {
                        try await d.client.updatePlayback(episode: 999_999, PlaybackUpdate(positionSeconds: 4))
                    }
                    #expect(try await d.client.podcast(detail.podcast.id).episodes.first { $0.id == episode.id }?.playback?.positionSeconds == 740)
                    // Mark all played: every episode, positions kept.
                    let all = try await d.client.markPlayed(podcast: detail.podcast.id)
                    #expect(all.episodes.allSatisfy { $0.playback?.played == true })
                    #expect(all.episodes.first { $0.id == episode.id }?.playback?.positionSeconds == 740)
                    await #expect(throws: FerryError.self) { try await d.client.markPlayed(podcast: 999_999) }

                    // Cleared from the list with the rest of the finished ones: still downloaded.
                    #expect(try await d.client.removeFinished() == [transfer.id])
                    #expect(try await d.client.transfers().transfers.isEmpty)
                    let cleared = try await d.client.podcast(detail.podcast.id)
                    #expect(cleared.episodes.first { $0.id == episode.id }?.state == .downloaded)
                    #expect(try await d.client.removeFinished().isEmpty)

                    // A new episode appears on refresh, marked new.
                    let more = Self.feed(base, count: 4)
                    _ = Self.serveMedia(origin, count: 4)
                    origin.update("/feed.xml") {
                        $0.data = more.data
                        $0.etag = "\"feed-v2\""
                    }
                    let second = try await d.client.refreshPodcasts(detail.podcast.id)
                    #expect(second.newEpisodes == 1)
                    let latest = try await d.client.podcast(detail.podcast.id)
                    #expect(latest.episodes.first?.title == "Episode 4")
                    #expect(latest.episodes.first?.isNew == true)
                    #expect(latest.podcast.newCount == 1)
                }
            }
        }
    }

    @Test func aFeedThatMovesIsFollowed() async throws {
        try await Origin.run { origin, base in
            _ = Self.serveMedia(origin)
            origin.serve("/new.xml", .init(data: Self.feed(base).data))
            origin.serve("/newest.xml", .init(data: Self.feed(base).data))
            origin.serve("/old.xml", .init(data: Self.feed(base).data))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let id = try await d.client.subscribe(url: base.appendingPathComponent("old.xml").absoluteString).podcast.id
                    // 301: the subscription follows.
                    origin.redirect("/old.xml", to: "/new.xml", status: 301)
                    _ = try await d.client.refreshPodcasts(id)
                    let moved = try await d.client.podcast(id).podcast.feedURL
                    #expect(moved == base.appendingPathComponent("new.xml").absoluteString)
                    // itunes:new-feed-url: the subscription follows too.
                    origin.update("/new.xml") { $0.data = Self.feed(base, newFeedURL: base.appendingPathComponent("newest.xml").absoluteString).data }
                    _ = try await d.client.refreshPodcasts(id)
                    let newest = try await d.client.podcast(id).podcast.feedURL
                    #expect(newest == base.appendingPathComponent("newest.xml").absoluteString)
                    // A temporary redirect does not move it.
                    origin.redirect("/newest.xml", to: "/new.xml", status: 302)
                    _ = try await d.client.refreshPodcasts(id)
                    let stays = try await d.client.podcast(id).podcast.feedURL
                    #expect(stays == base.appendingPathComponent("newest.xml").absoluteString)
                }
            }
        }
    }

    @Test func hostileEpisodeNamesStayInTheirFolder() async throws {
        try await Origin.run { origin, base in
            origin.serve("/x", .init(data: Origin.bytes(500)))
            let feed = TestFeed(
                title: "../../Evil <img src=x onerror=alert(1)>",
                items: [TestFeed.Item(guid: "1", title: "../../../etc/passwd", published: "Wed, 01 May 2024 10:00:00 GMT", enclosure: "../../x", type: "audio/mpeg")]
            )
            origin.serve("/feeds/evil.xml", .init(data: feed.data))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let detail = try await d.client.subscribe(url: base.appendingPathComponent("feeds/evil.xml").absoluteString)
                    // The folder is one safe component under Podcasts/.
                    #expect(detail.podcast.title.hasPrefix("../../Evil"))
                    #expect(!detail.podcast.folder.split(separator: "/").contains(".."))
                    #expect(detail.podcast.folder.split(separator: "/").count == 2)
                    #expect(detail.podcast.folder.hasPrefix("Podcasts/"))
                    // The relative enclosure resolves against the feed's URL.
                    #expect(detail.episodes[0].enclosureURL == base.appendingPathComponent("x").absoluteString)
                    let transfer = try await d.client.downloadEpisode(detail.episodes[0].id, session: "test")
                    try await eventually("downloaded") { try await d.client.transfer(transfer.id).state == .completed }
                    let path = try #require(try await d.client.transfer(transfer.id).path)
                    #expect(path.hasPrefix(d.paths.library.appendingPathComponent(detail.podcast.folder).path + "/"))
                    #expect(URL(fileURLWithPath: path).lastPathComponent == "2024-05-01 ..-..-..-etc-passwd.mp3")
                }
            }
        }
    }

    @Test func autoDownloadAndRetention() async throws {
        try await Origin.run { origin, base in
            _ = Self.serveMedia(origin, count: 4)
            origin.serve("/feed.xml", .init(data: Self.feed(base, count: 3).data, etag: nil))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let id = try await d.client.subscribe(url: base.appendingPathComponent("feed.xml").absoluteString).podcast.id
                    var detail = try await d.client.updatePodcast(id, PodcastSettings(autoDownload: 2, keepLatest: 2))
                    #expect(detail.podcast.autoDownload == 2)
                    #expect(detail.podcast.keepLatest == 2)
                    try await eventually("the newest two downloaded") {
                        try await d.client.podcast(id).episodes.filter { $0.state == .downloaded }.map(\.title) == ["Episode 3", "Episode 2"]
                    }
                    // Off the list (`ferry rm --finished`): the episodes' transfers are hidden, kept while they name them.
                    #expect(try await d.client.removeFinished().count == 2)
                    // A new episode: auto-downloaded, and retention drops the oldest download.
                    origin.update("/feed.xml") { $0.data = Self.feed(base, count: 4).data }
                    _ = try await d.client.refreshPodcasts(id)
                    try await eventually("episode 4 downloaded") {
                        try await d.client.podcast(id).episodes.first { $0.title == "Episode 4" }?.state == .downloaded
                    }
                    _ = try await d.client.refreshPodcasts(id)
                    detail = try await d.client.podcast(id)
                    #expect(detail.episodes.filter { $0.state == .downloaded }.map(\.title) == ["Episode 4", "Episode 3"])
                    let files = try FileManager.default.contentsOfDirectory(atPath: d.paths.library.appendingPathComponent("Podcasts/Test Show").path)
                    #expect(files.filter { $0.hasSuffix(".mp3") }.sorted() == ["2024-05-03 Episode 3.mp3", "2024-05-04 Episode 4.mp3"])
                    // The dropped episode's transfer is gone, not kept hidden for ever (the accelerated year's leak).
                    let rows = try await d.daemon.engine.local.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM transfer") }
                    #expect(rows == 2, "the two downloaded episodes' transfers, hidden or not")
                }
            }
        }
    }

    /// Feeds list their newest episodes: one the feed dropped is forgotten a month later by the
    /// daemon's clock, unless a listener has a place in it.
    @Test func episodesGoneFromTheFeedAreForgottenAMonthLater() async throws {
        let offset = Mutex<TimeInterval>(0)
        @Sendable func feed(_ base: URL, _ numbers: ClosedRange<Int>) -> Data {
            var feed = Self.feed(base, count: numbers.upperBound)
            feed.items = feed.items.filter { item in numbers.contains(Int(item.guid.dropFirst(3))!) }
            return feed.data
        }
        try await Origin.run { origin, base in
            origin.serve("/feed.xml", .init(data: feed(base, 1...4), etag: nil))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home, configure: { configuration in
                    configuration.engine.now = { Date() + offset.withLock { $0 } }
                    configuration.goneEpisodeDays = 30
                }) { d in
                    let detail = try await d.client.subscribe(url: base.appendingPathComponent("feed.xml").absoluteString)
                    let second = try #require(detail.episodes.first { $0.title == "Episode 2" })
                    _ = try await d.client.updatePlayback(episode: second.id, PlaybackUpdate(positionSeconds: 30, durationSeconds: 754))

                    origin.update("/feed.xml") { $0.data = feed(base, 3...5) }
                    _ = try await d.client.refreshPodcasts(detail.podcast.id)
                    #expect(try await d.client.podcast(detail.podcast.id).episodes.map(\.title) == ["Episode 5", "Episode 4", "Episode 3", "Episode 2", "Episode 1"])
                    offset.withLock { $0 = 29 * 86_400 }
                    _ = try await d.client.refreshPodcasts(detail.podcast.id)
                    #expect(try await d.client.podcast(detail.podcast.id).episodes.count == 5, "not yet a month")
                    offset.withLock { $0 = 31 * 86_400 }
                    _ = try await d.client.refreshPodcasts(detail.podcast.id)
                    #expect(try await d.client.podcast(detail.podcast.id).episodes.map(\.title) == ["Episode 5", "Episode 4", "Episode 3", "Episode 2"])
                }
            }
        }
    }

    @Test func downloadedStateIsRebuiltFromDiskWhenTheJournalIsLost() async throws {
        try await Origin.run { origin, base in
            _ = Self.serveMedia(origin)
            origin.serve("/feed.xml", .init(data: Self.feed(base).data))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let detail = try await d.client.subscribe(url: base.appendingPathComponent("feed.xml").absoluteString)
                    let transfer = try await d.client.downloadEpisode(detail.episodes[0].id, session: "test")
                    try await eventually("downloaded") { try await d.client.transfer(transfer.id).state == .completed }
                }
                // The journal is lost.
                for suffix in ["", "-wal", "-shm"] {
                    try? FileManager.default.removeItem(at: home.appendingPathComponent("state/journal.sqlite\(suffix)"))
                }
                let feedURL = base.appendingPathComponent("feed.xml").absoluteString
                try await DaemonHarness.run(home: home) { d in
                    try await Self.checkRestored(d, feedURL: feedURL)
                    // Found on disk without a transfer, it plays: its file, with ranges.
                    let episodes = try await d.client.podcast(try await d.client.podcasts()[0].id).episodes
                    let found = try #require(episodes.first { $0.state == .downloaded })
                    let whole = try await d.raw(.GET, "/v1/episodes/\(found.id)/file")
                    #expect(whole.status == 200 && whole.headers.first(name: "Accept-Ranges") == "bytes")
                    let size = try FileManager.default.attributesOfItem(atPath: try #require(found.path))[.size] as? Int
                    #expect(Int(whole.headers.first(name: "Content-Length") ?? "") == size)
                    let part = try await d.raw(.GET, "/v1/episodes/\(found.id)/file", headers: [("Range", "bytes=0-9")])
                    #expect(part.status == 206 && part.headers.first(name: "Content-Length") == "10")
                    let missing = try #require(episodes.first { $0.state == .notDownloaded })
                    #expect(try await d.raw(.GET, "/v1/episodes/\(missing.id)/file").status == 404)
                    #expect(try await d.raw(.GET, "/v1/episodes/999999/file").status == 404)
                    #expect(try await d.raw(.GET, "/v1/episodes/\(found.id)/file", authorized: false).status == 401)
                }
            }
        }
    }

    /// After a lost journal: the subscription comes back from its folder, and the file on disk
    /// counts as downloaded.
    static func checkRestored(_ d: DaemonHarness, feedURL: String) async throws {
        try await eventually("the subscription restored") { try await d.client.podcasts().count == 1 }
        let podcasts = try await d.client.podcasts()
        let id = podcasts[0].id
        #expect(podcasts[0].feedURL == feedURL)
        try await eventually("the episode shown as downloaded") {
            try await d.client.podcast(id).episodes.first { $0.title == "Episode 3" }?.state == .downloaded
        }
        let episodes = try await d.client.podcast(id).episodes
        #expect(episodes.filter { $0.title != "Episode 3" }.allSatisfy { $0.state == .notDownloaded })
    }

    /// A podcast's own speed and order: a serial lists oldest first; nonsense speeds are refused.
    @Test func aPodcastsSpeedAndOrder() async throws {
        try await Origin.run { origin, base in
            origin.serve("/feed.xml", .init(data: Self.feed(base).data))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let detail = try await d.client.subscribe(url: base.appendingPathComponent("feed.xml").absoluteString)
                    #expect(detail.episodes.map(\.title) == ["Episode 3", "Episode 2", "Episode 1"])
                    #expect(detail.podcast.playbackSpeed == nil && detail.podcast.oldestFirst == false)
                    let serial = try await d.client.updatePodcast(detail.podcast.id, PodcastSettings(playbackSpeed: 1.5, oldestFirst: true))
                    #expect(serial.episodes.map(\.title) == ["Episode 1", "Episode 2", "Episode 3"])
                    #expect(serial.podcast.playbackSpeed == 1.5 && serial.podcast.oldestFirst == true)
                    #expect(try await d.client.podcast(detail.podcast.id).episodes.first?.title == "Episode 1")
                    for bad in ["4", "0.1", "-1"] {
                        let refused = try await d.raw(.PATCH, "/v1/podcasts/\(detail.podcast.id)", body: #"{"playbackSpeed": \#(bad)}"#)
                        #expect(refused.status == 400 && refused.body.contains("playbackSpeed must be"), "\(bad): \(refused.body)")
                    }
                    let cleared = try await d.client.updatePodcast(detail.podcast.id, PodcastSettings(playbackSpeed: 0))
                    #expect(cleared.podcast.playbackSpeed == nil && cleared.podcast.oldestFirst == true)
                    // Its own refresh interval, 15 minutes to a week.
                    #expect(cleared.podcast.refreshMinutes == nil)
                    #expect(try await d.client.updatePodcast(detail.podcast.id, PodcastSettings(refreshMinutes: 30)).podcast.refreshMinutes == 30)
                    for bad in ["5", "20000", "-1"] {
                        let refused = try await d.raw(.PATCH, "/v1/podcasts/\(detail.podcast.id)", body: #"{"refreshMinutes": \#(bad)}"#)
                        #expect(refused.status == 400 && refused.body.contains("refreshMinutes must be"), "\(bad): \(refused.body)")
                    }
                    #expect(try await d.client.podcast(detail.podcast.id).podcast.refreshMinutes == 30)
                    #expect(try await d.client.updatePodcast(detail.podcast.id, PodcastSettings(refreshMinutes: 0)).podcast.refreshMinutes == nil)
                }
            }
        }
    }

    /// Each feed is fetched when its own interval (else the daemon's) has passed since its last fetch.
    @Test func eachFeedIsRefreshedOnItsOwnSchedule() async throws {
        try await Origin.run { origin, base in
            origin.serve("/often.xml", .init(data: Self.feed(base, title: "Often").data))
            origin.serve("/hourly.xml", .init(data: Self.feed(base, title: "Hourly").data))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let often = try await d.client.subscribe(url: base.appendingPathComponent("often.xml").absoluteString)
                    _ = try await d.client.subscribe(url: base.appendingPathComponent("hourly.xml").absoluteString)
                    _ = try await d.client.updatePodcast(often.podcast.id, PodcastSettings(refreshMinutes: 30))
                    let refresher = PodcastRefresher(podcasts: d.daemon.podcasts, interval: .seconds(3600), logger: testLogger("refresher"))
                    func fetches() -> [Int] { [origin.requests(for: "/often.xml").count, origin.requests(for: "/hourly.xml").count] }
                    #expect(fetches() == [1, 1])
                    let start = Date()
                    let next = await refresher.refreshDue(now: start.addingTimeInterval(20 * 60))
                    #expect(fetches() == [1, 1])
                    #expect(abs(next.timeIntervalSince(start) - 30 * 60) < 60, "next look at \(next.timeIntervalSince(start)) s")
                    await refresher.refreshDue(now: start.addingTimeInterval(31 * 60))
                    #expect(fetches() == [2, 1])
                    await refresher.refreshDue(now: start.addingTimeInterval(61 * 60))
                    #expect(fetches() == [3, 2])
                }
            }
        }
    }

    @Test func opmlImportAndExport() async throws {
        try await Origin.run { origin, base in
            _ = Self.serveMedia(origin)
            origin.serve("/a.xml", .init(data: Self.feed(base, title: "Show A").data))
            origin.serve("/b.xml", .init(data: Self.feed(base, title: "Show B & Friends").data))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let opml = """
                        <?xml version="1.0"?>
                        <opml version="2.0"><head><title>mine</title></head><body>
                        <outline text="A" type="rss" xmlUrl="\(base.appendingPathComponent("a.xml").absoluteString)"/>
                        <outline text="folder"><outline text="B" type="rss" xmlUrl="\(base.appendingPathComponent("b.xml").absoluteString)"/></outline>
                        <outline text="gone" type="rss" xmlUrl="\(base.appendingPathComponent("missing.xml").absoluteString)"/>
                        </body></opml>
                        """
                    let result = try await d.client.importOPML(Data(opml.utf8))
                    #expect(result.subscribed.map(\.title).sorted() == ["Show A", "Show B & Friends"])
                    #expect(result.failures.map(\.url) == [base.appendingPathComponent("missing.xml").absoluteString])
                    let exported = try await d.client.exportOPML()
                    #expect(exported.contains("Show B &amp; Friends"))
                    #expect(exported.contains(base.appendingPathComponent("a.xml").absoluteString))

                    let bad = await #expect(throws: FerryError.self) { try await d.client.importOPML(Data("not xml at all".utf8)) }
                    #expect(bad?.code.rawValue == "opml_invalid")
                }
            }
        }
    }

    @Test func badFeedsGiveClearErrors() async throws {
        try await Origin.run { origin, base in
            origin.serve("/page.html", .init(data: Data("<html><body>hi</body></html>".utf8), contentType: "text/html"))
            origin.serve("/bomb.xml", .init(data: Data("""
                <?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
                <rss><channel><title>&lol2;</title></channel></rss>
                """.utf8)))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let html = await #expect(throws: FerryError.self) {
                        try await d.client.subscribe(url: base.appendingPathComponent("page.html").absoluteString)
                    }
                    #expect(html?.code.rawValue == "feed_invalid")
                    let bomb = await #expect(throws: FerryError.self) {
                        try await d.client.subscribe(url: base.appendingPathComponent("bomb.xml").absoluteString)
                    }
                    #expect(bomb?.code.rawValue == "feed_invalid")
                    let missing = await #expect(throws: FerryError.self) {
                        try await d.client.subscribe(url: base.appendingPathComponent("nope.xml").absoluteString)
                    }
                    #expect(missing?.message.contains("404") == true)
                    // The caller's URL is at fault, not the daemon: 422, never a 5xx.
                    let raw = try await d.raw(.POST, "/v1/podcasts", body: #"{"url":"\#(base.appendingPathComponent("page.html"))"}"#)
                    #expect(raw.status == 422)
                    #expect(raw.body.contains("feed_invalid"))
                    let podcasts = try await d.client.podcasts()
                    #expect(podcasts.isEmpty)
                }
            }
        }
    }
}
