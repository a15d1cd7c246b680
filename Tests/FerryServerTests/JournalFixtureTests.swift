import FerryCore
import FerryKit
import FerryTestSupport
import Foundation
import GRDB
import Testing

@testable import FerryListening
@testable import FerryServer

/// A journal written by the Ferry of 27 November 2026 (migrations v1-v16, when FerryCore
/// registered every module's tables; `Tests/Fixtures/journals/make-journal-v16.py` made it) opens
/// with the tables each module now registers, and reads back the same.
@Suite struct JournalFixtureTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/journals/journal-v16.sqlite")

    @Test func aJournalMadeBeforeTheModulesOwnedTheirTablesReadsBackTheSame() async throws {
        try await withTemporaryDirectory { folder in
            // A copy: opening a journal writes to it (WAL).
            let url = folder.appendingPathComponent("journal.sqlite")
            try FileManager.default.copyItem(at: Self.fixture, to: url)
            let journal = try SQLiteJournal.open(at: url, tables: [.listening, .aria2])

            let transfers = try await journal.listTransfers(session: nil, states: nil, limit: nil, after: nil, newestFirst: false)
            #expect(transfers.map(\.transferId) == [1, 2, 3, 4, 5])
            #expect(transfers.map(\.state) == [.completed, .paused, .queued, .completed, .paused])
            #expect(transfers.map(\.session) == ["cli", "cli", "cli", "cli", "aria2"])
            #expect(transfers[0].fileName == "file.bin" && transfers[0].sha256?.count == 64)
            #expect(transfers[3].fileName == "2024-01-03 Three.mp3" && transfers[3].folder == "Podcasts/Fixture Radio")
            #expect(transfers[2].startAfter == ISO8601DateFormatter().date(from: "2030-01-01T00:00:00Z"))
            #expect(try await journal.events(session: "cli", after: 0, limit: 100).count >= 6)

            let store = SQLiteListeningStore(journal)
            let podcasts = try await store.podcasts()
            #expect(podcasts.map(\.title) == ["Fixture Radio"])
            let episodes = try await store.episodes(podcastId: podcasts[0].id!)
            #expect(episodes.map(\.title).sorted() == ["One", "Three", "Two"])
            let three = try #require(episodes.first { $0.title == "Three" })
            let two = try #require(episodes.first { $0.title == "Two" })
            let one = try #require(episodes.first { $0.title == "One" })
            #expect(three.transferId == 4)
            // One listener then; now the machine's owner and alice each have what it had.
            for listener in [Listener.owner, "alice"] {
                #expect(try await store.playbacks(listener, .episode, ids: [two.id!])[two.id!]?.positionSeconds == 42.5)
                #expect(try await store.upNextEntries(listener) == [UpNextEntry(kind: .episode, id: one.id!)])
                #expect(try await store.subscriptions(of: listener).map(\.podcast.title) == ["Fixture Radio"])
                #expect(try await store.syncSubscriptions(user: listener) == [podcasts[0].feedURL])
            }
            #expect(try await store.subscriptions(of: "bob").isEmpty)
            // The sync user is an account now, a member, with the same password.
            let hash = try #require(try await store.password(of: "alice")?.hash)
            #expect(AccountPassword.verify("fixture-password", against: hash))
            #expect(try await store.accounts(named: nil, now: Date()).map { [$0.name, $0.role.rawValue] } == [["alice", "member"]])

            #expect(try await journal.transferId(aria2GID: "0123456789abcdef") == 5)
            #expect(try await journal.aria2GIDTaken("0123456789abcdef"))

            // The episode's transfer is hidden, not deleted, when it leaves the list: the hook of
            // the listening tables is asked.
            _ = try await journal.removeTransfer(id: 4)
            #expect(try await journal.transfer(id: 4)?.hidden == true)
            _ = try await journal.removeTransfer(id: 1)
            #expect(try await journal.transfer(id: 1) == nil)
        }
    }

    /// Without the listening tables registered, the transfer engine's journal still opens such a
    /// file, and forgets a finished transfer outright (no module names it).
    @Test func theEnginesOwnTablesAloneOpenItToo() async throws {
        try await withTemporaryDirectory { folder in
            let url = folder.appendingPathComponent("journal.sqlite")
            try FileManager.default.copyItem(at: Self.fixture, to: url)
            let journal = try SQLiteJournal.open(at: url)
            #expect(try await journal.transfer(id: 3)?.state == .queued)
            _ = try await journal.removeTransfer(id: 4)
            #expect(try await journal.transfer(id: 4) == nil)
        }
    }

    /// A journal made now, with every module's tables, has exactly the schema the journals made
    /// before have: the same tables, columns, indexes and triggers, in the same migrations.
    @Test func aNewJournalHasTheSchemaOfTheOldOnes() async throws {
        try await withTemporaryDirectory { folder in
            let old = folder.appendingPathComponent("old.sqlite")
            try FileManager.default.copyItem(at: Self.fixture, to: old)
            let before = try SQLiteJournal.open(at: old, tables: [.listening, .aria2])
            let after = try SQLiteJournal.open(at: folder.appendingPathComponent("new.sqlite"), tables: [.listening, .aria2])
            @Sendable func schema(_ journal: SQLiteJournal) async throws -> [String] {
                try await journal.writer.read { db in
                    try String.fetchAll(db, sql: "SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
                        + String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
                }
            }
            let (was, now) = (try await schema(before), try await schema(after))
            #expect(was.count > 20)
            #expect(now == was)
        }
    }

    /// A journal a program opened with the transfer engine's tables alone gets the listening
    /// library's when the daemon opens it (v2's tables are their module's own migration).
    @Test func aJournalOpenedFirstWithTheEnginesTablesGetsTheOthersLater() async throws {
        try await withTemporaryDirectory { folder in
            let url = folder.appendingPathComponent("journal.sqlite")
            _ = try SQLiteJournal.open(at: url)
            let journal = try SQLiteJournal.open(at: url, tables: [.listening, .aria2])
            let store = SQLiteListeningStore(journal)
            let podcast = try await store.insertPodcast(PodcastRecord(feedURL: "http://127.0.0.1/feed", title: "Show", folder: "Podcasts/Show"))
            #expect(podcast.inserted)
            #expect(try await store.podcasts().map(\.title) == ["Show"])
        }
    }
}
