import FerryCore
import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Private feeds behind HTTP Basic authentication: a clear error without (or with wrong)
/// credentials and nothing recorded; with them, the feed and its episodes on the same host.
@Suite struct PrivateFeedAPITests {
    static let user = "listener"
    static let password = "pä$$ word:1"

    @Test func aPrivateFeedSubscribesWithAPasswordAndItsEpisodesDownloadWithIt() async throws {
        try await Origin.run { origin, base in
            let media = PodcastAPITests.serveMedia(origin, count: 2)
            origin.serve("/private.xml", .init(data: PodcastAPITests.feed(base, title: "Members Only", count: 2).data, contentType: "application/rss+xml"))
            for path in ["/private.xml", "/media/ep1.mp3", "/media/ep2.mp3"] { origin.protect(path, user: Self.user, password: Self.password) }
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let feedURL = base.appendingPathComponent("private.xml").absoluteString
                    // Without credentials: says what is needed; nothing is recorded.
                    await #expect {
                        _ = try await d.client.subscribe(url: feedURL)
                    } throws: { error in
                        let failure = error as? FerryError
                        return failure?.code == .feedCredentials && failure?.message.hasPrefix("This feed needs a user name and password") == true
                    }
                    // With wrong ones: says they were refused; still nothing recorded.
                    await #expect {
                        _ = try await d.client.subscribe(url: feedURL, user: Self.user, password: "nope")
                    } throws: { error in
                        (error as? FerryError)?.message.contains("refused the user name and password") == true
                    }
                    #expect(try await d.client.podcasts().isEmpty)

                    let detail = try await d.client.subscribe(url: feedURL, user: Self.user, password: Self.password)
                    #expect(detail.podcast.title == "Members Only")
                    #expect(detail.podcast.user == Self.user)
                    let shown = try await d.raw(.GET, "/v1/podcasts/\(detail.podcast.id)")
                    #expect(!shown.body.contains(Self.password) && !shown.body.contains("password"))

                    // A refresh sends them again.
                    let refreshed = try await d.client.refreshPodcasts(detail.podcast.id)
                    #expect(refreshed.failures.isEmpty)
                    #expect(origin.requests(for: "/private.xml").last?.headers["authorization"]?.hasPrefix("Basic ") == true)

                    // So does an episode on the same host; the transfer shows them redacted.
                    let transfer = try await d.client.downloadEpisode(detail.episodes[0].id, session: "test")
                    try await eventually("downloaded") { try await d.client.transfer(transfer.id).state == .completed }
                    let done = try await d.client.transfer(transfer.id)
                    #expect(done.sha256 == media[1].sha256)
                    #expect(done.options?.user == Self.user && done.options?.password == "<redacted>")
                    let events = try await d.daemon.engine.journal.events(session: nil, after: 0, limit: 10_000)
                    #expect(!String(decoding: try FerryJSON.encoder().encode(events), as: UTF8.self).contains("Basic "))
                }
            }
        }
    }

    /// Credentials in the URL work the same, and the URL is kept without them.
    @Test func credentialsInTheURLAreTakenOutOfIt() async throws {
        try await Origin.run { origin, base in
            origin.serve("/private.xml", .init(data: PodcastAPITests.feed(base, title: "In The URL", count: 1).data, contentType: "application/rss+xml"))
            origin.protect("/private.xml", user: Self.user, password: "open-sesame")
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    var components = URLComponents(url: base.appendingPathComponent("private.xml"), resolvingAgainstBaseURL: false)!
                    components.user = Self.user
                    components.password = "open-sesame"
                    let detail = try await d.client.subscribe(url: components.url!.absoluteString)
                    #expect(detail.podcast.feedURL == base.appendingPathComponent("private.xml").absoluteString)
                    #expect(detail.podcast.user == Self.user)
                    let opml = try await d.raw(.GET, "/v1/podcasts/export")
                    #expect(!opml.body.contains("open-sesame"))
                }
            }
        }
    }

    /// A feed behind Digest (SHA-256), and its episodes: the challenge answered, no Basic header
    /// sent to a server that did not ask for one.
    @Test func aDigestFeedAndItsEpisodes() async throws {
        try await Origin.run { origin, base in
            let media = PodcastAPITests.serveMedia(origin, count: 1)
            origin.serve("/digest.xml", .init(data: PodcastAPITests.feed(base, title: "Digest Only", count: 1).data, contentType: "application/rss+xml"))
            for path in ["/digest.xml", "/media/ep1.mp3"] { origin.protect(path, OriginLogin([.digestSHA256], user: Self.user, password: Self.password)) }
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let feedURL = base.appendingPathComponent("digest.xml").absoluteString
                    await #expect {
                        _ = try await d.client.subscribe(url: feedURL, user: Self.user, password: "nope")
                    } throws: { error in
                        (error as? FerryError)?.message.contains("refused the user name and password") == true
                    }
                    let detail = try await d.client.subscribe(url: feedURL, user: Self.user, password: Self.password)
                    #expect(detail.podcast.title == "Digest Only")
                    let transfer = try await d.client.downloadEpisode(detail.episodes[0].id, session: "test")
                    try await eventually("downloaded") { try await d.client.transfer(transfer.id).state == .completed }
                    #expect(try await d.client.transfer(transfer.id).sha256 == media[0].sha256)
                    #expect(origin.requests.allSatisfy { $0.authorization?.hasPrefix("Basic") != true })
                    #expect(origin.requests(for: "/media/ep1.mp3").last?.authorization?.contains("algorithm=SHA-256") == true)
                }
            }
        }
    }
}
