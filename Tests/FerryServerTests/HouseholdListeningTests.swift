import FerryCore
import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

/// One library, a place of one's own: podcasts, episodes and files are stored once; each
/// account's subscriptions, speeds, positions, played marks and Up Next are theirs, and the
/// library downloads and keeps what the union of the subscribers wants.
@Suite struct HouseholdListeningTests {
    /// `body` with the daemon, and Alice's and Bob's clients (members, by their API tokens).
    static func withHousehold(_ body: @Sendable (DaemonHarness, DaemonClient, DaemonClient) async throws -> Void) async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                var clients: [DaemonClient] = []
                for name in ["alice", "bob"] {
                    _ = try await d.client.addUser(name, password: "\(name)'s password")
                    clients.append(DaemonClient(baseURL: d.baseURL, token: try await d.client.makeUserToken(name).token))
                }
                try await body(d, clients[0], clients[1])
            }
        }
    }

    @Test func eachListenerHasTheirOwnSubscriptionsPlacesSpeedsAndUpNext() async throws {
        try await Origin.run { origin, base in
            _ = PodcastAPITests.serveMedia(origin)
            origin.serve("/feed.xml", .init(data: PodcastAPITests.feed(base).data))
            let feed = base.appendingPathComponent("feed.xml").absoluteString
            try await Self.withHousehold { d, alice, bob in
                let mine = try await alice.subscribe(url: feed)
                let ids = mine.episodes.map(\.id)
                #expect(try await bob.podcasts().isEmpty)
                await #expect(throws: FerryError.self, "not Bob's subscription") { try await bob.podcast(mine.podcast.id) }
                // Bob subscribes to what the library has: the same podcast, fetched once.
                let fetches = origin.requests(for: "/feed.xml").count
                let his = try await bob.subscribe(url: feed)
                #expect(his.podcast.id == mine.podcast.id && his.episodes.map(\.id) == ids)
                #expect(origin.requests(for: "/feed.xml").count == fetches)

                // Speeds and order, places and marks, Up Next: each their own.
                _ = try await alice.updatePodcast(mine.podcast.id, PodcastSettings(playbackSpeed: 1.5, oldestFirst: true))
                _ = try await alice.updatePlayback(episode: ids[0], PlaybackUpdate(positionSeconds: 300))
                _ = try await alice.setUpNext([UpNextEntry(kind: .episode, id: ids[1])])
                _ = try await bob.updatePlayback(episode: ids[0], PlaybackUpdate(positionSeconds: 12))
                _ = try await bob.markPlayed(podcast: mine.podcast.id)
                let a = try await alice.podcast(mine.podcast.id), b = try await bob.podcast(mine.podcast.id)
                #expect(a.podcast.playbackSpeed == 1.5 && a.podcast.oldestFirst == true)
                #expect(b.podcast.playbackSpeed == nil && b.podcast.oldestFirst != true)
                #expect(a.episodes.map(\.id) == ids.reversed() && b.episodes.map(\.id) == ids)
                #expect(a.episodes.first { $0.id == ids[0] }?.playback == .some(.init(positionSeconds: 300, played: false, updatedAt: a.episodes.first { $0.id == ids[0] }!.playback!.updatedAt)))
                #expect(a.episodes.allSatisfy { $0.id == ids[0] || $0.playback == nil }, "Bob's marks are not Alice's")
                #expect(b.episodes.allSatisfy { $0.playback?.played == true })
                #expect(try await alice.upNext().items.map(\.id) == [ids[1]])
                #expect(try await alice.upNext().items.first?.playbackSpeed == 1.5)
                #expect(try await bob.upNext().items.isEmpty)
                // The machine's own user (the daemon's token) has places of its own too.
                #expect(try await d.client.podcasts().isEmpty)
                #expect(try await d.client.upNext().items.isEmpty)

                // Alice leaves: Bob keeps the podcast. Bob leaves: it leaves the library.
                try await alice.unsubscribe(mine.podcast.id, deleteFiles: true)
                #expect(try await alice.podcasts().isEmpty)
                #expect(try await bob.podcast(mine.podcast.id).episodes.map(\.id) == ids)
                try await bob.unsubscribe(mine.podcast.id)
                await #expect(throws: FerryError.self) { try await bob.unsubscribe(mine.podcast.id) }
                let again = try await alice.subscribe(url: feed)
                #expect(again.podcast.id != mine.podcast.id, "a new subscription: the old one left the library")
            }
        }
    }

    @Test func theLibraryDownloadsAndKeepsWhatAnySubscriberWants() async throws {
        try await Origin.run { origin, base in
            _ = PodcastAPITests.serveMedia(origin, count: 4)
            origin.serve("/feed.xml", .init(data: PodcastAPITests.feed(base, count: 3).data, etag: nil))
            let feed = base.appendingPathComponent("feed.xml").absoluteString
            try await Self.withHousehold { d, alice, bob in
                let id = try await alice.subscribe(url: feed).podcast.id
                _ = try await bob.subscribe(url: feed)
                // Alice wants the newest two, keeping two; Bob wants one, keeping three: the library does two, keeps three.
                _ = try await alice.updatePodcast(id, PodcastSettings(autoDownload: 2, keepLatest: 2))
                let bobs = try await bob.updatePodcast(id, PodcastSettings(autoDownload: 1, keepLatest: 3))
                #expect(bobs.podcast.autoDownload == 1 && bobs.podcast.keepLatest == 3, "each sees their own wishes")
                try await eventually("the newest two downloaded") {
                    try await bob.podcast(id).episodes.filter { $0.state == .downloaded }.map(\.title) == ["Episode 3", "Episode 2"]
                }
                let episode1 = try #require(try await bob.podcast(id).episodes.first { $0.title == "Episode 1" })
                let transfer = try await bob.downloadEpisode(episode1.id, session: "test")
                try await eventually("episode 1 downloaded") { try await d.client.transfer(transfer.id).state == .completed }

                // A fourth episode: downloaded; Bob's three kept, not Alice's two.
                origin.update("/feed.xml") { $0.data = PodcastAPITests.feed(base, count: 4).data }
                // (Retention runs with each refresh, after the new episode's download has finished.)
                try await eventually("episode 4 downloaded, three kept") {
                    _ = try await alice.refreshPodcasts(id)
                    return try await alice.podcast(id).episodes.filter { $0.state == .downloaded }.map(\.title) == ["Episode 4", "Episode 3", "Episode 2"]
                }

                // Bob leaves: Alice's two are kept, except what Alice is in the middle of.
                let episode2 = try #require(try await alice.podcast(id).episodes.first { $0.title == "Episode 2" })
                _ = try await alice.updatePlayback(episode: episode2.id, PlaybackUpdate(positionSeconds: 60))
                try await bob.unsubscribe(id)
                _ = try await alice.refreshPodcasts(id)
                #expect(try await alice.podcast(id).episodes.filter { $0.state == .downloaded }.map(\.title) == ["Episode 4", "Episode 3", "Episode 2"])
                _ = try await alice.updatePlayback(episode: episode2.id, PlaybackUpdate(played: true))
                _ = try await alice.refreshPodcasts(id)
                #expect(try await alice.podcast(id).episodes.filter { $0.state == .downloaded }.map(\.title) == ["Episode 4", "Episode 3"])
            }
        }
    }

    @Test func aLoginLinkForAnAccountSignsThatAccountIn() async throws {
        try await Self.withHousehold { d, alice, _ in
            let link = try await d.client.loginLink(user: "alice")
            let response = try await d.raw(.GET, String(link.url.dropFirst(d.baseURL.count)), authorized: false)
            let cookie = try #require(response.headers.first(name: "Set-Cookie")?.split(separator: ";").first.map(String.init))
            #expect(cookie.hasPrefix("ferry_user="))
            let me = try await d.raw(.GET, "/v1/me", headers: [("Cookie", cookie)], authorized: false)
            #expect(me.status == 200 && me.body.contains(#""user":"alice""#), "\(me.body)")
            #expect(try await alice.userSessions("alice").credentials.count == 1)
            // Unknown accounts get no link; a member may not ask for one (the daemon's token only).
            await #expect(throws: FerryError.self) { try await d.client.loginLink(user: "mallory") }
            await #expect(throws: FerryError.self) { try await alice.loginLink(user: "alice") }
        }
    }
}
