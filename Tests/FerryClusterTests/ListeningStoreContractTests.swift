import FerryCluster
import FerryCore
import FerryFeeds
import FerryKit
import FerryListening
import FerryTestSupport
import Foundation
import Testing

/// The listening store's contract, as ``ListeningStore`` documents it, run against both stores:
/// the SQLite journal (a file) and PostgreSQL (a database of the test server's own), each test
/// on a fresh one. Times are whole seconds, which both keep exactly.
@Suite struct ListeningStoreContractTests {
    typealias Kind = JournalContractTests.Kind

    /// `body` with a fresh, empty store of `kind`, and the transfer journal in the same database.
    static func withStore(_ kind: Kind, _ body: (any ListeningStore, any TransferJournal) async throws -> Void) async throws {
        switch kind {
        case .sqlite:
            try await withTemporaryDirectory { folder in
                let journal = try SQLiteJournal.open(at: folder.appendingPathComponent("journal.sqlite"), tables: [.listening])
                try await body(SQLiteListeningStore(journal), journal)
            }
        case .postgres:
            let journal = try await PostgresJournal.connect(to: try await MigratedDatabase.make())
            defer { journal.close() }
            try await body(PostgresListeningStore(journal: journal), journal)
        }
    }

    private let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    private func draft(_ feed: String = "https://example.com/feed", title: String = "Show") -> PodcastRecord {
        PodcastRecord(feedURL: feed, title: title, folder: "Podcasts/\(title)", now: t0)
    }

    /// A feed item whose enclosure is `https://example.com/<guid>.mp3`, ten minutes long.
    private func item(_ guid: String, title: String? = nil, published: Date? = nil) -> FeedEpisode {
        FeedEpisode(
            guid: guid, title: title ?? "Episode \(guid)", published: published, duration: 600,
            enclosures: [.init(url: "https://example.com/\(guid).mp3", length: 1000, type: "audio/mpeg")]
        )
    }

    /// The machine's owner, who listens in most tests.
    private let me = Listener.owner

    /// Subscribes the owner to `feed` with `items` (not new) → the podcast's id and its episodes' ids, in feed order.
    private func subscribe(
        _ store: any ListeningStore, _ items: [FeedEpisode], feed: String = "https://example.com/feed", title: String = "Show"
    ) async throws -> (podcast: Int64, episodes: [Int64]) {
        let podcast = try await store.insertPodcast(draft(feed, title: title)).record.podcastId
        try await store.subscribe(me, podcastId: podcast, now: t0)
        let added = try await store.mergeEpisodes(podcastId: podcast, items, markNew: false)
        return (podcast, added.map(\.episodeId))
    }

    /// Expects `body` to throw a ``FerryError`` with `code`.
    private func expect(
        _ code: FerryError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    ) async {
        let error = await #expect(throws: FerryError.self, sourceLocation: sourceLocation) { try await body() }
        #expect(error?.code == code, sourceLocation: sourceLocation)
    }

    /// An episode as stored, apart from when it was first seen (the store's clock, kept to the
    /// millisecond or microsecond).
    private func comparable(_ episode: EpisodeRecord?) -> EpisodeRecord? {
        episode.map { episode in
            var episode = episode
            episode.firstSeenAt = .distantPast
            return episode
        }
    }

    // MARK: Podcasts

    @Test(arguments: Kind.available) func insertPodcastReturnsTheExistingSubscriptionForAKnownFeed(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let first = try await store.insertPodcast(draft(title: "First"))
            #expect(first.inserted)
            #expect(first.record.id != nil)
            #expect(try await store.podcast(id: first.record.podcastId) == first.record)
            #expect(try await store.podcast(feedURL: "https://example.com/feed") == first.record)
            #expect(try await store.podcast(feedURL: "https://example.com/other") == nil)
            #expect(try await store.podcast(id: first.record.podcastId + 100) == nil)

            let again = try await store.insertPodcast(draft(title: "Second"))
            #expect(!again.inserted)
            #expect(again.record == first.record)
            #expect(try await store.podcasts().map(\.title) == ["First"])
        }
    }

    @Test(arguments: Kind.available) func podcastsAreListedByTitleIgnoringCaseAndAccents(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            for title in ["beta", "Zulu", "Alpha", "delta"] {
                _ = try await store.insertPodcast(draft("https://example.com/\(title)", title: title))
            }
            #expect(try await store.podcasts().map(\.title) == ["Alpha", "beta", "delta", "Zulu"])
            _ = try await store.insertPodcast(draft("https://example.com/emile", title: "Émile"))
            #expect(try await store.podcasts().map(\.title) == ["Alpha", "beta", "delta", "Émile", "Zulu"])
        }
    }

    @Test(arguments: Kind.available) func updatePodcastChangesAndKeepsEveryField(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let id = try await store.insertPodcast(draft()).record.podcastId
            let refreshed = Date(timeIntervalSince1970: 1_700_000_123)
            let returned = try await store.updatePodcast(id: id) { podcast in
                podcast.feedURL = "https://example.com/moved"
                podcast.title = "Renamed"
                podcast.author = "Ann"
                podcast.etag = "\"v1\""
                podcast.lastModified = "Tue, 14 Nov 2023 22:13:20 GMT"
                podcast.refreshedAt = refreshed
                podcast.errorCode = "http_status"
                podcast.errorMessage = "404"
                podcast.autoDownload = 3
                podcast.keepLatest = 5
                podcast.refreshMinutes = 90
                podcast.username = "ann"
                podcast.password = "secret"
            }
            #expect(returned.title == "Renamed")
            let stored = try #require(try await store.podcast(id: id))
            #expect(stored.feedURL == "https://example.com/moved")
            #expect(stored.title == "Renamed")
            #expect(stored.author == "Ann")
            #expect(stored.etag == "\"v1\"")
            #expect(stored.lastModified == "Tue, 14 Nov 2023 22:13:20 GMT")
            #expect(stored.refreshedAt == refreshed)
            #expect(stored.errorCode == "http_status" && stored.errorMessage == "404")
            #expect(stored.autoDownload == 3 && stored.keepLatest == 5 && stored.refreshMinutes == 90)
            #expect(stored.username == "ann" && stored.password == "secret")
            #expect(stored.folder == "Podcasts/Show" && stored.createdAt == t0)
            #expect(try await store.podcast(feedURL: "https://example.com/moved")?.id == id)
            #expect(try await store.podcast(feedURL: "https://example.com/feed") == nil)

            try await store.updatePodcast(id: id) { podcast in
                podcast.author = nil
                podcast.refreshedAt = nil
                podcast.errorCode = nil
                podcast.errorMessage = nil
                podcast.keepLatest = nil
                podcast.username = nil
                podcast.password = nil
            }
            let cleared = try #require(try await store.podcast(id: id))
            #expect(cleared.author == nil && cleared.refreshedAt == nil && cleared.errorCode == nil && cleared.errorMessage == nil)
            #expect(cleared.keepLatest == nil)
            #expect(cleared.username == nil && cleared.password == nil)
            #expect(cleared.title == "Renamed" && cleared.refreshMinutes == 90)
        }
    }

    @Test(arguments: Kind.available) func changingOrDeletingAMissingPodcastIsNotFound(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            await expect(.notFound) { try await store.updatePodcast(id: 42) { $0.title = "x" } }
            await expect(.notFound) { try await store.deletePodcast(id: 42) }
        }
    }

    @Test(arguments: Kind.available) func deletePodcastRemovesItsEpisodes(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let gone = try await subscribe(store, [item("a"), item("b")])
            let kept = try await subscribe(store, [item("a")], feed: "https://example.com/kept", title: "Kept")
            try await store.deletePodcast(id: gone.podcast)
            #expect(try await store.podcast(id: gone.podcast) == nil)
            #expect(try await store.podcast(feedURL: "https://example.com/feed") == nil)
            #expect(try await store.episodes(podcastId: gone.podcast).isEmpty)
            #expect(try await store.episode(id: gone.episodes[0]) == nil)
            #expect(try await store.episodes(podcastId: kept.podcast).map(\.id) == kept.episodes)
            await expect(.notFound) { try await store.deletePodcast(id: gone.podcast) }
        }
    }

    // MARK: Episodes

    @Test(arguments: Kind.available) func mergeEpisodesAddsUnknownGuidsAndUpdatesKnownOnes(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let podcast = try await store.insertPodcast(draft()).record.podcastId
            let first = try await store.mergeEpisodes(podcastId: podcast, [item("a", published: t0), item("b")], markNew: false)
            #expect(first.map(\.guid) == ["a", "b"])
            #expect(first.allSatisfy { $0.id != nil && $0.podcastId == podcast && !$0.isNew })
            #expect(comparable(try await store.episode(id: first[0].episodeId)) == comparable(first[0]))

            let second = try await store.mergeEpisodes(
                podcastId: podcast, [item("a", title: "Retitled", published: t0), item("b"), item("c")], markNew: true
            )
            #expect(second.map(\.guid) == ["c"])
            #expect(second.first?.isNew == true)
            let a = try #require(try await store.episode(id: first[0].episodeId))
            #expect(a.title == "Retitled" && !a.isNew)
            #expect(try await store.episodes(podcastId: podcast).count == 3)

            // Nothing changed: nothing added.
            #expect(try await store.mergeEpisodes(podcastId: podcast, [item("a", title: "Retitled", published: t0)], markNew: true).isEmpty)
            // The same guid in another podcast is another episode.
            let other = try await store.insertPodcast(draft("https://example.com/other", title: "Other")).record.podcastId
            #expect(try await store.mergeEpisodes(podcastId: other, [item("a")], markNew: true).map(\.guid) == ["a"])
        }
    }

    /// A feed lists its newest episodes only: those it stopped listing are marked gone when it
    /// stops (not again later, and not at all by a feed that lists nothing), unmarked if listed
    /// again, and forgotten past the cut unless something names them.
    @Test(arguments: Kind.available) func episodesGoneFromTheFeedAreForgottenUnlessSomethingNamesThem(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let (podcast, ids) = try await subscribe(store, ["a", "b", "c", "d", "e", "f"].map { item($0) })
            try await store.updateEpisode(id: ids[1]) { $0.transferId = 7 }
            try await store.updateEpisode(id: ids[2]) { $0.filePath = "Podcasts/Show/c.mp3" }
            _ = try await store.updatePlayback("ann", .episode, id: ids[3], PlaybackUpdate(played: true), now: t0)
            try await store.setUpNext(me, [UpNextEntry(kind: .episode, id: ids[4])])

            #expect(try await store.mergeEpisodes(podcastId: podcast, [item("f"), item("g")], markNew: true, now: t0).map(\.guid) == ["g"])
            let gone = try await store.episodes(podcastId: podcast).filter { $0.goneSince != nil }
            #expect(Set(gone.map(\.guid)) == ["a", "b", "c", "d", "e"])
            #expect(gone.allSatisfy { $0.goneSince == t0 })
            // Still gone a day later: the mark keeps the day it went.
            _ = try await store.mergeEpisodes(podcastId: podcast, [item("f"), item("g")], markNew: true, now: t0 + 86_400)
            #expect(try await store.episode(id: ids[0])?.goneSince == t0)
            // A feed that lists nothing marks nothing.
            _ = try await store.mergeEpisodes(podcastId: podcast, [], markNew: true, now: t0 + 86_400)
            #expect(try await store.episodes(podcastId: podcast).filter { $0.goneSince == nil }.map(\.guid).sorted() == ["f", "g"])

            #expect(try await store.forgetGoneEpisodes(podcastId: podcast, goneBefore: t0) == 0, "gone at t0, not before it")
            #expect(try await store.forgetGoneEpisodes(podcastId: podcast, goneBefore: t0 + 1) == 1)
            #expect(try await store.episode(id: ids[0]) == nil, "a: nothing names it")
            #expect(try await store.episodes(podcastId: podcast).map(\.guid).sorted() == ["b", "c", "d", "e", "f", "g"])

            // Listed again: no longer gone; the others keep their day.
            _ = try await store.mergeEpisodes(podcastId: podcast, [item("b"), item("f"), item("g")], markNew: true, now: t0 + 2 * 86_400)
            #expect(try await store.episode(id: ids[1])?.goneSince == nil)
            #expect(try await store.episode(id: ids[2])?.goneSince == t0)
            // Once nothing names them, they go too.
            try await store.updateEpisode(id: ids[2]) { $0.filePath = nil }
            try await store.setUpNext(me, [])
            #expect(try await store.forgetGoneEpisodes(podcastId: podcast, goneBefore: t0 + 1) == 2)
            #expect(try await store.episodes(podcastId: podcast).map(\.guid).sorted() == ["b", "d", "f", "g"])
        }
    }

    /// Bookmarks are the listener's own, keep a gone episode from being forgotten, and go with
    /// their episode, their podcast and their listener.
    @Test(arguments: Kind.available) func bookmarksAreEachListenersAndGoWithWhatTheyMark(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let (podcast, ids) = try await subscribe(store, ["a", "b"].map { item($0) })
            let mark = try await store.addBookmark("ann", .episode, id: ids[0], seconds: 61.5, note: "here", now: t0)
            _ = try await store.addBookmark("ann", .episode, id: ids[0], seconds: 12, note: nil, now: t0)
            _ = try await store.addBookmark("bob", .episode, id: ids[1], seconds: 3, note: nil, now: t0)
            #expect(try await store.bookmarks("ann", .episode, id: ids[0]).map(\.seconds) == [12, 61.5])
            #expect(try await store.bookmarks("ann", nil, id: nil).count == 2)
            #expect(try await store.bookmarks("bob", nil, id: nil).count == 1)
            await #expect(throws: FerryError.self) { try await store.updateBookmark("bob", id: mark.id, note: "mine") }
            await #expect(throws: FerryError.self) { try await store.deleteBookmark("bob", id: mark.id) }
            #expect(try await store.updateBookmark("ann", id: mark.id, note: "there").note == "there")
            await #expect(throws: FerryError.self) { try await store.addBookmark("ann", .episode, id: 999_999, seconds: 1, note: nil, now: t0) }

            // Gone from the feed, a bookmarked episode stays; without its bookmarks it goes, and they with it.
            _ = try await store.mergeEpisodes(podcastId: podcast, [item("c")], markNew: true, now: t0)
            #expect(try await store.forgetGoneEpisodes(podcastId: podcast, goneBefore: t0 + 1) == 0)
            let bobs = try await store.bookmarks("bob", nil, id: nil)
            try await store.deleteBookmark("bob", id: try #require(bobs.first).id)
            #expect(try await store.forgetGoneEpisodes(podcastId: podcast, goneBefore: t0 + 1) == 1)
            #expect(try await store.episode(id: ids[1]) == nil)
            // The podcast removed: its episodes' bookmarks go too.
            try await store.deletePodcast(id: podcast)
            #expect(try await store.bookmarks("ann", nil, id: nil).isEmpty)
        }
    }

    /// Transcripts: each claimed once, indexed, searched by the listener's podcasts (every word
    /// in one line, phrases whole, case and accents aside); a failure tried again after its wait
    /// at most three times, started over when the feed names another file; gone with the episode.
    @Test(arguments: Kind.available) func transcriptsAreClaimedIndexedSearchedAndGoWithTheirEpisode(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            func episode(_ guid: String, _ transcript: String?) -> FeedEpisode {
                var episode = item(guid)
                episode.transcripts = transcript.map { [.init(url: "https://example.com/\($0)")] } ?? []
                return episode
            }
            func claim(_ now: Date, retryBefore: Date? = nil) async throws -> [Int64] {
                try await store.claimTranscripts(limit: 10, now: now, claimedBefore: now - 600, retryBefore: retryBefore ?? now - 86_400).map(\.episodeId).sorted()
            }
            func search(_ text: String, _ listener: String? = nil, podcast: Int64? = nil) async throws -> [TranscriptLine] {
                try await store.searchTranscripts(listener ?? me, try TranscriptQuery(text), podcastId: podcast, limit: 10)
            }
            let (podcast, ids) = try await subscribe(store, [episode("a", "a.vtt"), episode("b", "b.vtt"), episode("c", nil)])
            #expect(try await claim(t0) == [ids[0], ids[1]])
            #expect(try await claim(t0 + 1).isEmpty, "claimed a moment ago")
            #expect(try await store.transcriptIndexStatus(me) == TranscriptIndexStatus(indexed: 0, pending: 2, failed: 0))

            try await store.indexTranscript(episodeId: ids[0], url: "https://example.com/a.vtt", cues: [
                TranscriptCue(startSeconds: 12, endSeconds: 15, speaker: "Ann", text: "Welcome to the Café Müller show"),
                TranscriptCue(startSeconds: 754.5, endSeconds: 760, text: "The big rocket went to the moon"),
            ], now: t0)
            try await store.transcriptFailed(episodeId: ids[1], url: "https://example.com/b.vtt", error: FerryError(.feedInvalid, "no"), now: t0)
            #expect(try await store.transcriptIndexStatus(me) == TranscriptIndexStatus(indexed: 1, pending: 0, failed: 1))
            #expect(try await store.transcriptIndexStatus("bob") == TranscriptIndexStatus(indexed: 0, pending: 0, failed: 0))

            let hit = try #require(try await search("cafe MULLER").first)
            #expect(hit == TranscriptLine(episodeId: ids[0], seconds: 12, speaker: "Ann", text: "Welcome to the Café Müller show"))
            #expect(try await search("moon rocket").map(\.seconds) == [754.5])
            #expect(try await search(#""big rocket""#).map(\.seconds) == [754.5])
            #expect(try await search(#""rocket big""#).isEmpty, "a phrase is in its order")
            #expect(try await search("moon welcome").isEmpty, "every word in one line")
            #expect(try await search("moon", podcast: podcast).count == 1)
            #expect(try await search("moon", podcast: podcast + 1_000).isEmpty)
            #expect(try await search("moon", "bob").isEmpty, "not bob's podcast")

            // A failure is tried again a day later, three times in all.
            #expect(try await claim(t0 + 700).isEmpty)
            for day in [2, 4] {
                let now = t0 + Double(day) * 86_400
                #expect(try await claim(now) == [ids[1]], "try \(day)")
                try await store.transcriptFailed(episodeId: ids[1], url: "https://example.com/b.vtt", error: FerryError(.feedInvalid, "no"), now: now)
            }
            #expect(try await claim(t0 + 9 * 86_400).isEmpty, "given up")
            // The feed names other files: both start over; indexing anew replaces the lines.
            _ = try await store.mergeEpisodes(podcastId: podcast, [episode("a", "a2.vtt"), episode("b", "b2.vtt"), episode("c", nil)], markNew: false, now: t0)
            #expect(try await claim(t0 + 10 * 86_400) == [ids[0], ids[1]])
            #expect(try await store.transcriptIndexStatus(me) == TranscriptIndexStatus(indexed: 0, pending: 2, failed: 0))
            try await store.indexTranscript(episodeId: ids[0], url: "https://example.com/a2.vtt", cues: [
                TranscriptCue(startSeconds: 3, endSeconds: 4, text: "Only stars now"),
            ], now: t0)
            #expect(try await search("moon").isEmpty)
            #expect(try await search("stars").map(\.seconds) == [3])

            // Gone with the podcast (and so its episodes).
            try await store.deletePodcast(id: podcast)
            #expect(try await search("stars").isEmpty)
            #expect(try await claim(t0 + 20 * 86_400).isEmpty)
        }
    }

    /// Playlists are the listener's own, named differently; items move between them and Up Next
    /// in one step; an item keeps a gone episode from being forgotten, and goes with its episode.
    @Test(arguments: Kind.available) func playlistsAreEachListenersAndMoveItemsWithUpNext(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let (podcast, ids) = try await subscribe(store, ["a", "b", "c"].map { item($0) })
            let entries = ids.map { UpNextEntry(kind: .episode, id: $0) }
            let trip = try await store.createPlaylist("ann", name: "road trip", entries: [entries[0], entries[1], entries[0]], now: t0)
            #expect(trip.entries == [entries[0], entries[1]])
            let other = try await store.createPlaylist("ann", name: "commute", entries: [], now: t0)
            await #expect(throws: FerryError.self) { try await store.createPlaylist("ann", name: "road trip", entries: [], now: t0) }
            await #expect(throws: FerryError.self) { try await store.renamePlaylist("ann", id: other.id, name: "road trip", now: t0) }
            await #expect(throws: FerryError.self) { try await store.createPlaylist("ann", name: "x", entries: [UpNextEntry(kind: .episode, id: 999_999)], now: t0) }
            #expect(try await store.playlists("ann").map(\.name) == ["commute", "road trip"])
            _ = try await store.createPlaylist("bob", name: "road trip", entries: [], now: t0)
            #expect(try await store.playlists("bob").count == 1)
            await #expect(throws: FerryError.self) { try await store.playlist("bob", id: trip.id) }
            await #expect(throws: FerryError.self) { try await store.deletePlaylist("bob", id: trip.id) }
            await #expect(throws: FerryError.self) { try await store.setPlaylistEntries("bob", id: trip.id, [], now: t0) }

            // Reordered, renamed; moved to Up Next, to another playlist, added.
            try await store.setPlaylistEntries("ann", id: trip.id, [entries[1], entries[0]], now: t0 + 1)
            try await store.renamePlaylist("ann", id: trip.id, name: "Road trip", now: t0 + 2)
            #expect(try await store.playlist("ann", id: trip.id).name == "Road trip")
            try await store.setUpNext("ann", [entries[2]])
            try await store.moveEntry("ann", entries[0], from: .playlist(trip.id), to: .upNext, now: t0)
            #expect(try await store.upNextEntries("ann") == [entries[2], entries[0]])
            #expect(try await store.playlist("ann", id: trip.id).entries == [entries[1]])
            try await store.moveEntry("ann", entries[2], from: .upNext, to: .playlist(other.id), now: t0)
            try await store.moveEntry("ann", entries[0], from: nil, to: .playlist(other.id), now: t0)
            #expect(try await store.playlist("ann", id: other.id).entries == [entries[2], entries[0]])
            #expect(try await store.upNextEntries("ann") == [entries[0]])
            await #expect(throws: FerryError.self) { try await store.moveEntry("ann", entries[1], from: .upNext, to: .playlist(other.id), now: t0) }
            await #expect(throws: FerryError.self) { try await store.moveEntry("bob", entries[1], from: .playlist(trip.id), to: .upNext, now: t0) }
            #expect(try await store.playlist("ann", id: trip.id).entries == [entries[1]], "a refused move changes nothing")

            // Gone from the feed, an episode in a playlist stays; deleted, it leaves the playlist.
            try await store.setUpNext("ann", [])
            try await store.setPlaylistEntries("ann", id: other.id, [], now: t0)
            _ = try await store.mergeEpisodes(podcastId: podcast, [item("d")], markNew: true, now: t0)
            #expect(try await store.forgetGoneEpisodes(podcastId: podcast, goneBefore: t0 + 1) == 2)
            #expect(try await store.episode(id: ids[1]) != nil)
            try await store.deletePodcast(id: podcast)
            #expect(try await store.playlist("ann", id: trip.id).entries.isEmpty)
            try await store.deletePlaylist("ann", id: trip.id)
            #expect(try await store.playlists("ann").map(\.name) == ["commute"])
        }
    }

    /// Newest first by publication date; the same date: the later added first; no date: last
    /// (as SQLite sorts NULL in a descending order).
    @Test(arguments: Kind.available) func episodesAreListedNewestFirstUndatedLast(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let day: TimeInterval = 86_400
            let (podcast, _) = try await subscribe(store, [
                item("a", published: t0), item("b", published: t0 + day), item("undated"), item("d", published: t0 + day),
            ])
            #expect(try await store.episodes(podcastId: podcast).map(\.guid) == ["d", "b", "a", "undated"])
        }
    }

    @Test(arguments: Kind.available) func updateEpisodeAndMarkEpisodesSeen(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let (podcast, ids) = try await subscribe(store, [item("a")])
            _ = try await store.mergeEpisodes(podcastId: podcast, [item("b"), item("c")], markNew: true)
            let returned = try await store.updateEpisode(id: ids[0]) { episode in
                episode.transferId = 7
                episode.filePath = "Podcasts/Show/a.mp3"
                episode.isNew = true
            }
            #expect(returned.transferId == 7)
            #expect(comparable(try await store.episode(id: ids[0])) == comparable(returned))
            try await store.updateEpisode(id: ids[0]) { episode in
                episode.transferId = nil
                episode.filePath = nil
            }
            let cleared = try #require(try await store.episode(id: ids[0]))
            #expect(cleared.transferId == nil && cleared.filePath == nil && cleared.isNew)
            await expect(.notFound) { try await store.updateEpisode(id: 999) { $0.isNew = false } }

            #expect(try await store.episodes(podcastId: podcast).filter(\.isNew).count == 3)
            try await store.markEpisodesSeen(podcastId: podcast)
            #expect(try await store.episodes(podcastId: podcast).filter(\.isNew).isEmpty)
        }
    }

    /// Downloaded: a completed transfer or a file found on disk; new: marked new and not downloaded.
    @Test(arguments: Kind.available) func episodeCountsPerPodcast(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, transfers in
            let (podcast, _) = try await subscribe(store, [item("old")])
            let added = try await store.mergeEpisodes(podcastId: podcast, [item("queued"), item("file"), item("done"), item("fresh")], markNew: true)
            let ids = Dictionary(uniqueKeysWithValues: added.map { ($0.guid, $0.episodeId) })
            func transfer(_ url: String) async throws -> Int64 {
                try await transfers.createTransfer(TransferRecord(session: "s", url: url, folder: "Podcasts/Show"), reuseExisting: false).record.transferId
            }
            let queued = try await transfer("https://example.com/queued.mp3")
            let done = try await transfer("https://example.com/done.mp3")
            try await transfers.update(id: done) { record in
                record.state = .completed
                return nil
            }
            try await store.updateEpisode(id: ids["queued"]!) { $0.transferId = queued }
            try await store.updateEpisode(id: ids["done"]!) { $0.transferId = done }
            try await store.updateEpisode(id: ids["file"]!) { $0.filePath = "Podcasts/Show/file.mp3" }
            let (other, _) = try await subscribe(store, [item("x"), item("y")], feed: "https://example.com/other", title: "Other")

            // [total, new, downloaded]
            let counts = try await store.episodeCounts().mapValues { [$0.total, $0.new, $0.downloaded] }
            #expect(counts[podcast] == [5, 2, 2])
            #expect(counts[other] == [2, 0, 0])
        }
    }

    // MARK: Catalog songs

    @Test(arguments: Kind.available) func saveTrackReplacesAndTracksFindsByIds(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let one = TrackRecord(
                trackId: 1, transferId: 10, title: "One", artist: "Band", collection: "Album", artworkURL: "https://example.com/1.jpg",
                previewURL: "https://example.com/1.m4a", durationSeconds: 30, createdAt: t0
            )
            let two = TrackRecord(
                trackId: 2, transferId: nil, title: "Two", artist: nil, collection: nil, artworkURL: nil, previewURL: nil, durationSeconds: nil, createdAt: t0
            )
            try await store.saveTrack(one)
            try await store.saveTrack(two)
            var renamed = one
            renamed.title = "One (Remastered)"
            renamed.transferId = 11
            try await store.saveTrack(renamed)
            #expect(try await store.tracks(ids: [1, 2, 3]) == [1: renamed, 2: two])
            #expect(try await store.tracks(ids: []).isEmpty)
        }
    }

    // MARK: Playback

    @Test(arguments: Kind.available) func playbackOfEpisodesAndSongsPersists(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let (podcast, ids) = try await subscribe(store, [item("a"), item("b")])
            try await store.saveTrack(TrackRecord(
                trackId: 5, transferId: nil, title: "Song", artist: nil, collection: nil, artworkURL: nil, previewURL: nil, durationSeconds: 30, createdAt: t0
            ))
            await expect(.notFound) { _ = try await store.updatePlayback(me, .episode, id: 999, PlaybackUpdate(positionSeconds: 1), now: t0) }
            await expect(.notFound) { _ = try await store.updatePlayback(me, .track, id: ids[0], PlaybackUpdate(positionSeconds: 1), now: t0) }
            await expect(.invalidRequest) { _ = try await store.updatePlayback(me, .episode, id: ids[0], PlaybackUpdate(positionSeconds: -1), now: t0) }

            let a = try await store.updatePlayback(me, .episode, id: ids[0], PlaybackUpdate(positionSeconds: 30), now: t0)
            #expect(a == Playback(positionSeconds: 30, played: false, updatedAt: t0))
            let song = try await store.updatePlayback(me, .track, id: 5, PlaybackUpdate(positionSeconds: 12.5), now: t0)
            #expect(try await store.playbacks(me, podcastId: podcast) == [ids[0]: a])
            #expect(try await store.playbacks(me, .episode, ids: [ids[0], ids[1], 5]) == [ids[0]: a])
            #expect(try await store.playbacks(me, .track, ids: [5, ids[0]]) == [5: song])
            #expect(try await store.playbacks(me, .track, ids: []).isEmpty)

            // Near the end counts as played.
            let ended = try await store.updatePlayback(me, .episode, id: ids[1], PlaybackUpdate(positionSeconds: 590, durationSeconds: 600), now: t0 + 10)
            #expect(ended.played)

            let later = t0 + 60
            try await store.markPlayed(me, podcastId: podcast, now: later)
            let played = try await store.playbacks(me, podcastId: podcast)
            #expect(played[ids[0]] == Playback(positionSeconds: 30, played: true, updatedAt: later))
            #expect(played[ids[1]] == ended)
        }
    }

    @Test(arguments: Kind.available) func anEpisodesPlaybackIsReportedToPhonesAsOneOwnAction(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let (podcast, ids) = try await subscribe(store, [item("a")])
            try await store.saveTrack(TrackRecord(
                trackId: 5, transferId: nil, title: "Song", artist: nil, collection: nil, artworkURL: nil, previewURL: nil, durationSeconds: 30, createdAt: t0
            ))
            _ = try await store.updatePlayback(me, .episode, id: ids[0], PlaybackUpdate(positionSeconds: 10), now: t0)
            _ = try await store.updatePlayback(me, .episode, id: ids[0], PlaybackUpdate(positionSeconds: 40), now: t0 + 30)
            _ = try await store.updatePlayback(me, .track, id: 5, PlaybackUpdate(positionSeconds: 3), now: t0 + 30)
            let own = { try await store.episodeActions(user: me, since: 0, podcast: nil, device: EpisodeAction.ownDevice, aggregated: false) }
            #expect(try await own() == [EpisodeAction(
                podcast: "https://example.com/feed", episode: "https://example.com/a.mp3", guid: "a", action: .play,
                device: "ferry", timestamp: 1_700_000_030, started: 10, position: 40, total: 600
            )])

            try await store.markPlayed(me, podcastId: podcast, now: t0 + 60)
            #expect(try await own() == [EpisodeAction(
                podcast: "https://example.com/feed", episode: "https://example.com/a.mp3", guid: "a", action: .play,
                device: "ferry", timestamp: 1_700_000_060, started: 0, position: 600, total: 600
            )])
        }
    }

    // MARK: Up Next

    @Test(arguments: Kind.available) func upNextKeepsOrderAndFirstPlaces(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let (podcast, ids) = try await subscribe(store, [item("a"), item("b"), item("c")])
            try await store.saveTrack(TrackRecord(
                trackId: 5, transferId: nil, title: "Song", artist: nil, collection: nil, artworkURL: nil, previewURL: nil, durationSeconds: 30, createdAt: t0
            ))
            let a = UpNextEntry(kind: .episode, id: ids[0]), b = UpNextEntry(kind: .episode, id: ids[1])
            let c = UpNextEntry(kind: .episode, id: ids[2]), song = UpNextEntry(kind: .track, id: 5)
            #expect(try await store.upNextEntries(me).isEmpty)
            try await store.setUpNext(me, [b, song, a, b])
            #expect(try await store.upNextEntries(me) == [b, song, a])

            // A missing item changes nothing.
            await expect(.notFound) { try await store.setUpNext(me, [c, UpNextEntry(kind: .episode, id: 999)]) }
            await expect(.notFound) { try await store.setUpNext(me, [c, UpNextEntry(kind: .track, id: ids[0] + 1000)]) }
            #expect(try await store.upNextEntries(me) == [b, song, a])

            // An unsubscribed podcast's episodes leave the list.
            try await store.deletePodcast(id: podcast)
            #expect(try await store.upNextEntries(me) == [song])
            try await store.setUpNext(me, [])
            #expect(try await store.upNextEntries(me).isEmpty)
        }
    }

    @Test(arguments: Kind.available) func upNextHoldsAtMostItsLimit(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let (_, ids) = try await subscribe(store, (0...UpNext.limit).map { item("e\($0)") })
            let entries = ids.map { UpNextEntry(kind: .episode, id: $0) }
            #expect(entries.count == UpNext.limit + 1)
            try await store.setUpNext(me, Array(entries.prefix(UpNext.limit)))
            #expect(try await store.upNextEntries(me).count == UpNext.limit)
            await expect(.invalidRequest) { try await store.setUpNext(me, entries) }
            #expect(try await store.upNextEntries(me) == Array(entries.prefix(UpNext.limit)))
        }
    }

    // MARK: Accounts and their devices, sessions and tokens

    @Test(arguments: Kind.available) func accountsAndTheirDevices(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            #expect(try await store.addAccount("ann", passwordHash: "h1", role: .admin, now: t0))
            #expect(try await !store.addAccount("ann", passwordHash: "h2", role: .member, now: t0 + 60), "a name is taken once")
            #expect(try await store.addAccount("bob", passwordHash: "hb", role: .member, now: t0))
            #expect(try await store.password(of: "ann")?.hash == "h1")
            #expect(try await store.password(of: "ann")?.role == .admin)
            #expect(try await store.updateAccount("ann", passwordHash: "h2", role: nil))
            #expect(try await store.updateAccount("bob", passwordHash: nil, role: .admin))
            #expect(try await !store.updateAccount("nobody", passwordHash: "x", role: nil))
            #expect(try await store.password(of: "ann")?.hash == "h2")
            #expect(try await store.password(of: "nobody") == nil)

            try await store.updateSyncDevice(user: "ann", id: "phone", caption: "Ann's phone", type: "mobile", now: t0)
            try await store.updateSyncDevice(user: "ann", id: "phone", caption: nil, type: "laptop", now: t0)
            try await store.updateSyncDevice(user: "ann", id: "tablet", caption: nil, type: nil, now: t0)
            let devices = try await store.syncDevices(user: "ann").sorted { $0.id < $1.id }
            #expect(devices.map { [$0.id, $0.caption, $0.type] } == [["phone", "Ann's phone", "laptop"], ["tablet", "", "other"]])
            #expect(try await store.syncDevices(user: "bob").isEmpty)

            let accounts = try await store.accounts(named: nil, now: t0)
            #expect(accounts == [Account(name: "ann", role: .admin, createdAt: t0, devices: 2), Account(name: "bob", role: .admin, createdAt: t0)])

            #expect(try await store.removeAccount("ann"))
            #expect(try await !store.removeAccount("ann"))
            #expect(try await store.syncDevices(user: "ann").isEmpty)
            #expect(try await store.password(of: "ann") == nil)
            #expect(try await store.accounts(named: nil, now: t0).map(\.name) == ["bob"])
            #expect(try await store.accounts(named: "bob", now: t0).map(\.name) == ["bob"])
            #expect(try await store.accounts(named: "ann", now: t0).isEmpty)
        }
    }

    @Test(arguments: Kind.available) func sessionsExpireAndTokensLast(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            _ = try await store.addAccount("ann", passwordHash: "h", role: .member, now: t0)
            _ = try await store.addAccount("bob", passwordHash: "h", role: .admin, now: t0)
            let phone = AccountCredentialRecord(
                hash: "s1", id: "id-s1", user: "ann", kind: .session, createdAt: t0, lastUsedAt: t0, expiresAt: t0 + 3600, label: "Phone",
                address: "10.0.0.2"
            )
            let laptop = AccountCredentialRecord(hash: "s2", id: "id-s2", user: "ann", kind: .session, createdAt: t0 + 10, expiresAt: t0 + 60)
            let script = AccountCredentialRecord(hash: "t1", id: "id-t1", user: "ann", kind: .token, createdAt: t0, label: "backup script")
            let bobs = AccountCredentialRecord(hash: "s3", id: "id-s3", user: "bob", kind: .session, createdAt: t0, expiresAt: t0 + 3600)
            for credential in [phone, laptop, script, bobs] { try await store.addCredential(credential) }

            #expect(try await store.credential(hash: "s1", now: t0 + 1)?.credential == phone)
            #expect(try await store.credential(hash: "s1", now: t0 + 1)?.role == .member)
            #expect(try await store.credential(hash: "s3", now: t0 + 1)?.role == .admin)
            #expect(try await store.credential(hash: "s2", now: t0 + 61) == nil, "an expired session does not count")
            #expect(try await store.credential(hash: "t1", now: t0 + 1_000_000)?.credential == script, "a token has no end")
            #expect(try await store.credential(hash: "nope", now: t0) == nil)
            #expect(try await store.credentials(user: "ann", kind: .session, now: t0 + 1).map(\.id) == ["id-s2", "id-s1"])
            #expect(try await store.credentials(user: "ann", kind: .session, now: t0 + 61).map(\.id) == ["id-s1"])
            #expect(try await store.accounts(named: nil, now: t0 + 1).first?.sessions == 2)
            #expect(try await store.accounts(named: nil, now: t0 + 1).first?.tokens == 1)

            try await store.touchCredential(hash: "s1", at: t0 + 30, address: "10.0.0.9")
            let touched = try #require(try await store.credential(hash: "s1", now: t0 + 31)?.credential)
            #expect(touched.lastUsedAt == t0 + 30 && touched.address == "10.0.0.9")

            // Sign out everywhere but here; then one token by id; another's are untouched.
            #expect(try await store.removeCredentials(user: "ann", kind: .session, id: nil, keeping: "s1") == 1)
            #expect(try await store.credentials(user: "ann", kind: .session, now: t0).map(\.id) == ["id-s1"])
            #expect(try await store.removeCredentials(user: "ann", kind: .token, id: "id-s1", keeping: nil) == 0, "an id of another kind")
            #expect(try await store.removeCredentials(user: "bob", kind: .token, id: "id-t1", keeping: nil) == 0, "another's id")
            #expect(try await store.removeCredentials(user: "ann", kind: .token, id: "id-t1", keeping: nil) == 1)
            #expect(try await store.credential(hash: "t1", now: t0) == nil)
            #expect(try await store.credential(hash: "s3", now: t0) != nil)

            // A removed account takes its credentials with it.
            #expect(try await store.removeAccount("ann"))
            #expect(try await store.credential(hash: "s1", now: t0) == nil)
        }
    }

    // MARK: Each listener's subscriptions

    @Test(arguments: Kind.available) func eachListenerHasTheirOwnSubscriptionsAndThePodcastTheUnionOfTheirWishes(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let a = try await store.insertPodcast(draft("https://example.com/a", title: "A")).record.podcastId
            let b = try await store.insertPodcast(draft("https://example.com/b", title: "b")).record.podcastId
            await expect(.notFound) { try await store.subscribe("ann", podcastId: 999, now: t0) }
            let first = try await store.subscribe("ann", podcastId: a, now: t0)
            #expect(first == Subscription(listener: "ann", podcastId: a, createdAt: t0))
            #expect(try await store.subscribe("ann", podcastId: a, now: t0 + 60) == first, "subscribing again changes nothing")
            try await store.subscribe("ann", podcastId: b, now: t0)
            try await store.subscribe("bob", podcastId: a, now: t0)
            #expect(try await store.subscriptions(of: "ann").map(\.podcast.podcastId) == [a, b], "by title, case ignored")
            #expect(try await store.subscriptions(of: "bob").map(\.subscription) == [Subscription(listener: "bob", podcastId: a, createdAt: t0)])
            #expect(try await store.subscriptions(of: me).isEmpty)
            #expect(try await store.subscription(me, podcastId: a) == nil)

            // Each one's wishes are their own; the podcast does the most anyone wants kept or downloaded.
            try await store.updateSubscription("ann", podcastId: a) { $0.autoDownload = 2; $0.keepLatest = 3; $0.playbackSpeed = 1.5; $0.oldestFirst = true }
            try await store.updateSubscription("bob", podcastId: a) { $0.autoDownload = 1; $0.keepLatest = 5 }
            let ann = try #require(try await store.subscription("ann", podcastId: a))
            #expect(ann.autoDownload == 2 && ann.keepLatest == 3 && ann.playbackSpeed == 1.5 && ann.oldestFirst)
            let bob = try #require(try await store.subscription("bob", podcastId: a))
            #expect(bob.playbackSpeed == nil && !bob.oldestFirst)
            var podcast = try #require(try await store.podcast(id: a))
            #expect(podcast.autoDownload == 2 && podcast.keepLatest == 5)
            await expect(.notFound) { try await store.updateSubscription(me, podcastId: a) { $0.autoDownload = 9 } }

            // Bob leaves: Ann's wishes alone; Ann leaves: the podcast stays until deleted, wishing nothing.
            #expect(try await store.unsubscribe("bob", podcastId: a) == 1)
            podcast = try #require(try await store.podcast(id: a))
            #expect(podcast.autoDownload == 2 && podcast.keepLatest == 3)
            await expect(.notFound) { _ = try await store.unsubscribe("bob", podcastId: a) }
            #expect(try await store.unsubscribe("ann", podcastId: a) == 0)
            podcast = try #require(try await store.podcast(id: a))
            #expect(podcast.autoDownload == 0 && podcast.keepLatest == nil)

            // Deleting a podcast ends its subscriptions.
            try await store.deletePodcast(id: b)
            #expect(try await store.subscriptions(of: "ann").isEmpty)
        }
    }

    @Test(arguments: Kind.available) func placesAndUpNextAreEachListenersAndRetentionKeepsWhatAnyoneNeeds(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let (podcast, ids) = try await subscribe(store, [item("a"), item("b"), item("c"), item("d")])
            try await store.subscribe("ann", podcastId: podcast, now: t0)
            _ = try await store.updatePlayback("ann", .episode, id: ids[0], PlaybackUpdate(positionSeconds: 30), now: t0)
            _ = try await store.updatePlayback(me, .episode, id: ids[0], PlaybackUpdate(positionSeconds: 70), now: t0)
            _ = try await store.updatePlayback(me, .episode, id: ids[1], PlaybackUpdate(positionSeconds: 590, durationSeconds: 600), now: t0)
            #expect(try await store.playbacks("ann", podcastId: podcast) == [ids[0]: Playback(positionSeconds: 30, played: false, updatedAt: t0)])
            #expect(try await store.playbacks(me, podcastId: podcast)[ids[0]]?.positionSeconds == 70)
            try await store.markPlayed("ann", podcastId: podcast, now: t0 + 60)
            #expect(try await store.playbacks(me, podcastId: podcast)[ids[0]]?.played == false, "Ann's marks are Ann's")

            try await store.setUpNext("bob", [UpNextEntry(kind: .episode, id: ids[2])])
            try await store.setUpNext(me, [UpNextEntry(kind: .episode, id: ids[1])])
            #expect(try await store.upNextEntries("bob") == [UpNextEntry(kind: .episode, id: ids[2])])
            #expect(try await store.upNextEntries("ann").isEmpty)

            // In use: what someone is in the middle of (mine of a), or has in Up Next (b, c); not
            // what was finished (Ann's a, played) or never started (d).
            #expect(try await store.episodesInUse(podcastId: podcast) == [ids[0], ids[1], ids[2]])
            _ = try await store.updatePlayback(me, .episode, id: ids[0], PlaybackUpdate(played: true), now: t0 + 70)
            try await store.setUpNext(me, [])
            #expect(try await store.episodesInUse(podcastId: podcast) == [ids[2]])
        }
    }

    @Test(arguments: Kind.available) func aRemovedAccountsPlacesGoTheirPodcastsStay(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let (podcast, ids) = try await subscribe(store, [item("a")])
            _ = try await store.addAccount("ann", passwordHash: "h", role: .member, now: t0)
            try await store.subscribe("ann", podcastId: podcast, now: t0)
            try await store.updateSubscription("ann", podcastId: podcast) { $0.autoDownload = 3 }
            _ = try await store.updatePlayback("ann", .episode, id: ids[0], PlaybackUpdate(positionSeconds: 30), now: t0)
            try await store.setUpNext("ann", [UpNextEntry(kind: .episode, id: ids[0])])
            let trip = try await store.createPlaylist("ann", name: "road trip", entries: [UpNextEntry(kind: .episode, id: ids[0])], now: t0)
            #expect(try await store.podcast(id: podcast)?.autoDownload == 3)

            #expect(try await store.removeAccount("ann"))
            #expect(try await store.subscriptions(of: "ann").isEmpty)
            #expect(try await store.playbacks("ann", podcastId: podcast).isEmpty)
            #expect(try await store.upNextEntries("ann").isEmpty)
            #expect(try await store.playlists("ann").isEmpty)
            await #expect(throws: FerryError.self) { try await store.playlist("ann", id: trip.id) }
            #expect(try await store.episodeActions(user: "ann", since: 0, podcast: nil, device: nil, aggregated: false).isEmpty)
            #expect(try await store.syncSubscriptionChanges(user: "ann", since: 0).add.isEmpty)
            #expect(try await store.podcast(id: podcast)?.autoDownload == 0, "the union is the others' again")
            #expect(try await store.subscriptions(of: me).map(\.podcast.podcastId) == [podcast])
        }
    }

    // MARK: Sync subscriptions

    @Test(arguments: Kind.available) func subscriptionChangesAreLoggedByTheStorePerUser(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let a = try await store.insertPodcast(draft("https://example.com/a", title: "A")).record.podcastId
            let b = try await store.insertPodcast(draft("https://example.com/b", title: "B")).record.podcastId
            let c = try await store.insertPodcast(draft("https://example.com/c", title: "C")).record.podcastId
            for id in [a, b, c] { try await store.subscribe("ann", podcastId: id, now: t0) }
            try await store.subscribe("bob", podcastId: a, now: t0)
            try await store.deletePodcast(id: b)
            _ = try await store.unsubscribe("ann", podcastId: c)
            try await store.updatePodcast(id: a) { $0.feedURL = "https://example.com/a2" }
            try await store.updatePodcast(id: a) { $0.title = "A, renamed" }

            let changes = try await store.syncSubscriptionChanges(user: "ann", since: 0)
            #expect(Set(changes.add) == ["https://example.com/a2"])
            #expect(Set(changes.remove) == ["https://example.com/a", "https://example.com/b", "https://example.com/c"])
            #expect(changes.add.count == 1 && changes.remove.count == 3)
            let bob = try await store.syncSubscriptionChanges(user: "bob", since: 0)
            #expect(bob.add == ["https://example.com/a2"] && bob.remove == ["https://example.com/a"])
            #expect(try await store.syncSubscriptions(user: "ann") == ["https://example.com/a2"])
            let tomorrow = Int64(Date().timeIntervalSince1970) + 86_400
            let none = try await store.syncSubscriptionChanges(user: "ann", since: tomorrow)
            #expect(none.add.isEmpty && none.remove.isEmpty)
        }
    }

    @Test(arguments: Kind.available) func eachFeedsLastChangeAndTheDeletionsMarkedOnIt(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let a = try await store.insertPodcast(draft("https://example.com/a", title: "A")).record.podcastId
            let b = try await store.insertPodcast(draft("https://example.com/b", title: "B")).record.podcastId
            for id in [a, b] { try await store.subscribe("ann", podcastId: id, now: t0) }
            try await store.subscribe("bob", podcastId: b, now: t0)
            _ = try await store.unsubscribe("ann", podcastId: b)

            let states = try await store.syncSubscriptionStates(user: "ann", since: nil)
            #expect(states.map(\.url) == ["https://example.com/a", "https://example.com/b"], "oldest change first")
            #expect(states.map(\.subscribed) == [true, false] && states.allSatisfy { !$0.deleted && $0.at > 0 })
            let tomorrow = Int64(Date().timeIntervalSince1970) + 86_400
            #expect(try await store.syncSubscriptionStates(user: "ann", since: tomorrow).isEmpty)

            // Only a removal can be marked deleted: A is subscribed, and Bob's B is not Ann's.
            #expect(try await store.markSyncDeletion(user: "ann", url: "https://example.com/a") == nil)
            #expect(try await store.markSyncDeletion(user: "ann", url: "https://example.com/never") == nil)
            let id = try #require(try await store.markSyncDeletion(user: "ann", url: "https://example.com/b"))
            #expect(id == states[1].seq)
            #expect(try await store.syncDeletion(user: "ann", id: id)?.url == "https://example.com/b")
            #expect(try await store.syncDeletion(user: "bob", id: id) == nil, "a deletion is its user's")
            #expect(try await store.syncDeletion(user: "ann", id: states[0].seq) == nil, "a change that is no deletion")
            #expect(try await store.syncSubscriptionStates(user: "ann", since: nil).map(\.deleted) == [false, true])
            #expect(try await store.syncSubscriptionStates(user: "bob", since: nil).map(\.deleted) == [false])

            // Subscribed again: no longer deleted, and the deletion stays answerable.
            try await store.subscribe("ann", podcastId: b, now: t0)
            let again = try await store.syncSubscriptionStates(user: "ann", since: nil)
            #expect(again.map(\.url) == ["https://example.com/a", "https://example.com/b"] && again.map(\.deleted) == [false, false])
            #expect(again[1].subscribed && again[1].seq > id)
            #expect(try await store.syncDeletion(user: "ann", id: id) != nil)
        }
    }

    @Test(arguments: Kind.available) func aPhonesSubscriptionsBecomeTheUsersPendingOrUnsubscribe(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let known = try await store.insertPodcast(draft("https://example.com/known", title: "Known")).record.podcastId
            let library = try await store.insertPodcast(draft("https://example.com/library", title: "Library")).record.podcastId
            try await store.subscribe("ann", podcastId: known, now: t0)
            _ = try await store.addAccount("ann", passwordHash: "h", role: .member, now: t0)
            let unsubscribe = try await store.applySyncSubscriptions(
                user: "ann", device: "phone",
                add: ["https://example.com/new", "https://example.com/dropped", "https://example.com/library"],
                remove: ["https://example.com/known"], now: t0
            )
            #expect(unsubscribe == [known])
            #expect(try await store.syncDevices(user: "ann").map(\.id) == ["phone"])
            // A podcast the library has is Ann's at once; the others wait to be fetched.
            #expect(try await store.subscription("ann", podcastId: library) != nil)
            #expect(Set(try await store.syncPending().map(\.url)) == ["https://example.com/new", "https://example.com/dropped"])
            #expect(try await store.syncPending().allSatisfy { $0.user == "ann" })
            #expect(try await store.syncSubscriptions(user: "ann") == [
                "https://example.com/dropped", "https://example.com/known", "https://example.com/library", "https://example.com/new",
            ])
            #expect(try await store.syncSubscriptions(user: "bob").isEmpty)

            // Removing a pending one drops it, and Ann's phones hear of it.
            #expect(try await store.applySyncSubscriptions(user: "ann", device: "phone", add: [], remove: ["https://example.com/dropped"], now: t0).isEmpty)
            #expect(try await store.syncPending().map(\.url) == ["https://example.com/new"])
            let changes = try await store.syncSubscriptionChanges(user: "ann", since: 0)
            #expect(changes.add.contains("https://example.com/new") && changes.remove == ["https://example.com/dropped"])

            try await store.resolvePending(user: "ann", "https://example.com/new", error: "The feed answered 404.")
            #expect(try await store.syncPending().map(\.url) == ["https://example.com/new"])
            try await store.resolvePending(user: "bob", "https://example.com/new", error: nil)
            #expect(try await store.syncPending().map(\.url) == ["https://example.com/new"], "Bob's resolving is not Ann's")
            try await store.resolvePending(user: "ann", "https://example.com/new", error: nil)
            #expect(try await store.syncPending().isEmpty)
        }
    }

    // MARK: Episode actions

    @Test(arguments: Kind.available) func aPhonesActionsMovePlaybackUnlessOlder(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let feed = "https://example.com/feed"
            let (_, ids) = try await subscribe(store, [item("a"), item("b")])
            _ = try await store.addAccount("ann", passwordHash: "h", role: .member, now: t0)
            _ = try await store.updatePlayback("ann", .episode, id: ids[0], PlaybackUpdate(positionSeconds: 10), now: t0)
            func play(_ media: String, guid: String? = nil, at seconds: Int64, position: Int) -> EpisodeAction {
                EpisodeAction(podcast: feed, episode: media, guid: guid, action: .play, device: "phone", timestamp: seconds, started: 0, position: position, total: 600)
            }
            func playback(_ id: Int64, of listener: String = "ann") async throws -> Playback? {
                try await store.playbacks(listener, .episode, ids: [id])[id]
            }

            // By enclosure URL, newer than the web app's.
            try await store.storeEpisodeActions([play("https://example.com/a.mp3", at: 1_700_000_060, position: 100)], user: "ann", now: t0 + 100)
            #expect(try await playback(ids[0]) == Playback(positionSeconds: 100, played: false, updatedAt: t0 + 60))
            // Older than what the store knows: no change.
            try await store.storeEpisodeActions([play("https://example.com/a.mp3", at: 1_699_999_940, position: 5)], user: "ann", now: t0 + 100)
            #expect(try await playback(ids[0]) == Playback(positionSeconds: 100, played: false, updatedAt: t0 + 60))
            // By guid, the media URL having moved; only in the action's podcast.
            let (_, others) = try await subscribe(store, [item("b")], feed: "https://example.com/other", title: "Other")
            try await store.storeEpisodeActions([play("https://cdn.example.com/b.mp3", guid: "b", at: 1_700_000_000, position: 50)], user: "ann", now: t0 + 100)
            #expect(try await playback(ids[1]) == Playback(positionSeconds: 50, played: false, updatedAt: t0))
            #expect(try await playback(others[0]) == nil)
            #expect(try await store.syncDevices(user: "ann").map(\.id) == ["phone"])

            // `new` marks it unplayed, its position kept.
            _ = try await store.updatePlayback("ann", .episode, id: ids[1], PlaybackUpdate(played: true), now: t0 + 10)
            let new = EpisodeAction(podcast: feed, episode: "https://example.com/b.mp3", guid: "b", action: .new, device: "phone", timestamp: 1_700_000_020)
            try await store.storeEpisodeActions([new], user: "ann", now: t0 + 100)
            #expect(try await playback(ids[1]) == Playback(positionSeconds: 50, played: false, updatedAt: t0 + 20))

            // Ann's phone moved Ann's places, nobody else's.
            #expect(try await playback(ids[0], of: me) == nil)
            #expect(try await playback(ids[1], of: me) == nil)
        }
    }

    @Test(arguments: Kind.available) func episodeActionsFilterByTimePodcastAndDevice(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let f = "https://example.com/f", g = "https://example.com/g"
            _ = try await store.addAccount("ann", passwordHash: "h", role: .member, now: t0)
            let first = EpisodeAction(podcast: f, episode: "\(f)/1.mp3", action: .play, device: "phone", timestamp: 1_700_000_000, started: 0, position: 10, total: 60)
            var second = first
            second.timestamp = 1_700_000_010
            (second.started, second.position) = (10, 20)
            let download = EpisodeAction(podcast: f, episode: "\(f)/2.mp3", action: .download, device: "phone", timestamp: 1_700_000_005)
            let elsewhere = EpisodeAction(podcast: g, episode: "\(g)/1.mp3", action: .delete, device: "tablet", timestamp: 1_700_000_000)
            try await store.storeEpisodeActions([first, second, download], user: "ann", now: t0 + 100)
            try await store.storeEpisodeActions([elsewhere], user: "ann", now: t0 + 200)

            func actions(since: Int64 = 0, podcast: String? = nil, device: String? = nil, aggregated: Bool = false) async throws -> [EpisodeAction] {
                try await store.episodeActions(user: "ann", since: since, podcast: podcast, device: device, aggregated: aggregated)
            }
            #expect(try await actions() == [first, second, download, elsewhere])
            #expect(try await actions(since: 1_700_000_200) == [elsewhere])
            #expect(try await actions(since: 1_700_000_201).isEmpty)
            #expect(try await actions(podcast: f) == [first, second, download])
            #expect(try await actions(device: "tablet") == [elsewhere])
            #expect(try await actions(podcast: g, device: "phone").isEmpty)
            #expect(try await actions(aggregated: true) == [second, download, elsewhere])
            #expect(try await actions(podcast: f, aggregated: true) == [second, download])
            #expect(Set(try await store.syncDevices(user: "ann").map(\.id)) == ["phone", "tablet"])
        }
    }

    // MARK: Refreshing

    @Test(arguments: Kind.available) func refreshTurnsRunTheirBodies(_ kind: Kind) async throws {
        try await Self.withStore(kind) { store, _ in
            let podcast = try await store.insertPodcast(draft()).record.podcastId
            let turn = try await store.duringRefreshTurn { "turn" }
            #expect(turn == "turn")
            let refreshed = try await store.refreshingPodcast(podcast) { podcast * 2 }
            #expect(refreshed == podcast * 2)
            // A body's error reaches the caller, and the next turn is free.
            await #expect(throws: FerryError.self) { _ = try await store.duringRefreshTurn { () async throws -> Int in throw FerryError.invalidRequest("no") } }
            #expect(try await store.duringRefreshTurn { 1 } == 1)
        }
    }
}
