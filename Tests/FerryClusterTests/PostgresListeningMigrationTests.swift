import FerryCore
import FerryKit
import FerryListening
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCluster

/// A cluster's database from before each listener had places of their own (migrations 1–5, one
/// shared library) keeps everything when migration 6 runs: the machine's owner and every account
/// get the subscriptions, positions, Up Next, pending feeds and phone actions there were.
@Suite struct PostgresListeningMigrationTests {
    @Test(.enabled(if: PostgresServer.isAvailable, "PostgreSQL is not installed here: \(PostgresServer.unavailableReason ?? "")"))
    func aSharedLibraryBecomesEveryListenersOwn() async throws {
        let url = try await PostgresServer.newDatabase()
        var podcast = PodcastRecord(feedURL: "https://example.com/feed", title: "Show", folder: "Podcasts/Show")
        podcast.autoDownload = 2
        podcast.keepLatest = 4
        let before = PostgresSchema.migrations.filter { $0.version <= 5 }
        let setup = before.flatMap(\.statements) + [
            "CREATE TABLE ferry_migration (version INT PRIMARY KEY, name TEXT NOT NULL, \"appliedAt\" TIMESTAMPTZ NOT NULL DEFAULT now())",
            "INSERT INTO ferry_migration (version, name) VALUES " + before.map { "(\($0.version), 'test')" }.joined(separator: ", "),
            "INSERT INTO account (name, \"passwordHash\", \"createdAt\") VALUES ('alice', 'h', now())",
            "INSERT INTO podcast (record) VALUES ('\(try PostgresListeningStore.json(podcast))'::jsonb)",
            #"INSERT INTO episode (record) VALUES (jsonb_build_object('podcastId', (SELECT id FROM podcast), 'guid', 'a', 'title', 'A', 'isNew', false, 'firstSeenAt', 0))"#,
            #"INSERT INTO playback VALUES ('episode', (SELECT id FROM episode), 42.5, false, now())"#,
            #"INSERT INTO "upNext" VALUES (0, 'episode', (SELECT id FROM episode))"#,
            #"INSERT INTO "syncPending" VALUES ('https://example.com/pending', 1700000000, NULL)"#,
            #"INSERT INTO "syncEpisodeAction" (podcast, episode, action, "timestamp", "receivedAt") VALUES ('https://example.com/feed', 'https://example.com/a.mp3', 'play', 1700000000, 1700000000)"#,
        ]
        try await PostgresServer.offPool { _ = try PostgresServer.start().psql(url, setup.joined(separator: ";\n")) }

        let journal = try await PostgresJournal.connect(to: url, patience: .seconds(60))
        defer { journal.close() }
        let store = PostgresListeningStore(journal: journal)
        let id = try #require(try await store.podcasts().first?.podcastId)
        let episode = try #require(try await store.episodes(podcastId: id).first?.episodeId)
        for listener in [Listener.owner, "alice"] {
            let subscription = try #require(try await store.subscription(listener, podcastId: id))
            #expect(subscription.autoDownload == 2 && subscription.keepLatest == 4)
            #expect(try await store.playbacks(listener, .episode, ids: [episode])[episode]?.positionSeconds == 42.5)
            #expect(try await store.upNextEntries(listener) == [UpNextEntry(kind: .episode, id: episode)])
        }
        #expect(try await store.syncSubscriptions(user: "alice") == ["https://example.com/feed", "https://example.com/pending"])
        #expect(try await store.episodeActions(user: "alice", since: 0, podcast: nil, device: nil, aggregated: false).map(\.episode)
            == ["https://example.com/a.mp3"])
        #expect(try await store.podcast(id: id)?.autoDownload == 2)
        #expect(try await store.subscriptions(of: "bob").isEmpty)
    }
}
