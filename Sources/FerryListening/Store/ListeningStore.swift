import FerryCore
import FerryFeeds
import FerryKit
import Foundation

/// Where the listeners' library lives: podcasts and their episodes, catalog songs, and each
/// listener's subscriptions, playback, Up Next and sync with phones. One machine keeps it in its SQLite journal, in tables of its own
/// (``SQLiteListeningStore``); a cluster keeps it in PostgreSQL with the queue
/// (`PostgresListeningStore`, FerryCluster), so every member shows and changes one library.
///
/// Each method is one transaction. The rules that decide what a write does (episodes merged by
/// guid, a phone's action applied to playback, the daemon's own actions reported to phones)
/// are pure and shared (``EpisodeRecord/merge(_:into:podcastId:markNew:now:)``,
/// ``Playback/after(_:now:)``, ``EpisodeAction/own(feed:media:guid:total:from:to:)``), so the
/// two stores differ only in their SQL. `ListeningStoreContractTests` runs against both.
///
/// Podcasts, episodes, songs and files are the household's, stored once; what a `listener`
/// (an account's name, or ``Listener/owner``) subscribes to, where they are, what they played,
/// their Up Next and their phones' actions are their own.
package protocol ListeningStore: AccountStore {
    // MARK: Podcasts and episodes

    /// Journals a new podcast of the library; a feed URL already there returns that podcast.
    func insertPodcast(_ new: PodcastRecord) async throws -> (record: PodcastRecord, inserted: Bool)
    func podcast(id: Int64) async throws -> PodcastRecord?
    func podcast(feedURL: String) async throws -> PodcastRecord?
    /// Every podcast of the library, by title (case and accents ignored).
    func podcasts() async throws -> [PodcastRecord]
    /// Changes a subscription in one transaction. - Throws: `not_found`.
    @discardableResult
    func updatePodcast(id: Int64, _ body: @escaping @Sendable (inout PodcastRecord) throws -> Void) async throws -> PodcastRecord
    /// Deletes a podcast, its episodes and its subscriptions (their transfers and files stay).
    /// - Throws: `not_found`.
    func deletePodcast(id: Int64) async throws

    // MARK: Each listener's subscriptions

    /// Subscribes the listener (already subscribed: their subscription as it is).
    /// - Throws: `not_found` for no such podcast.
    @discardableResult
    func subscribe(_ listener: String, podcastId: Int64, now: Date) async throws -> Subscription
    /// The listener's subscriptions with their podcasts, by title.
    func subscriptions(of listener: String) async throws -> [(podcast: PodcastRecord, subscription: Subscription)]
    func subscription(_ listener: String, podcastId: Int64) async throws -> Subscription?
    /// Changes the listener's subscription, and the podcast's union of wishes
    /// (``Subscription/union(of:)``) with it, in one transaction. - Throws: `not_found`.
    @discardableResult
    func updateSubscription(
        _ listener: String, podcastId: Int64, _ body: @escaping @Sendable (inout Subscription) throws -> Void
    ) async throws -> Subscription
    /// Ends the listener's subscription (the podcast's union follows).
    /// - Returns: how many listeners are still subscribed. - Throws: `not_found` when not subscribed.
    func unsubscribe(_ listener: String, podcastId: Int64) async throws -> Int
    /// Episodes of the podcast that some listener is in the middle of or has in Up Next or a playlist:
    /// retention keeps their files.
    func episodesInUse(podcastId: Int64) async throws -> Set<Int64>
    /// Merges a parsed feed's episodes into the podcast's, by guid, in one transaction.
    /// Episodes it no longer lists are marked gone from `now` (``EpisodeRecord/merge(_:into:podcastId:markNew:now:)``).
    /// - Parameter markNew: mark episodes not seen before as new (false on the first fetch).
    /// - Returns: the episodes that were not there before.
    func mergeEpisodes(podcastId: Int64, _ episodes: [FeedEpisode], markNew: Bool, now: Date) async throws -> [EpisodeRecord]
    /// Deletes the podcast's episodes that its feed stopped listing before `goneBefore` and that
    /// nothing names: no transfer or file, no listener's place or play, no Up Next.
    /// - Returns: how many were forgotten.
    @discardableResult
    func forgetGoneEpisodes(podcastId: Int64, goneBefore: Date) async throws -> Int
    /// A podcast's episodes, newest first.
    func episodes(podcastId: Int64) async throws -> [EpisodeRecord]
    func episode(id: Int64) async throws -> EpisodeRecord?
    /// Changes an episode in one transaction. - Throws: `not_found`.
    @discardableResult
    func updateEpisode(id: Int64, _ body: @escaping @Sendable (inout EpisodeRecord) throws -> Void) async throws -> EpisodeRecord
    /// Clears the "new" mark of every episode of a podcast.
    func markEpisodesSeen(podcastId: Int64) async throws
    /// Episode counts per podcast: all, new and not downloaded, downloaded (its transfer
    /// completed, or a file found on disk).
    func episodeCounts() async throws -> [Int64: (total: Int, new: Int, downloaded: Int)]

    // MARK: Catalog songs

    /// Remembers a catalog track and the transfer that downloads its preview.
    func saveTrack(_ track: TrackRecord) async throws
    func tracks(ids: [Int64]) async throws -> [Int64: TrackRecord]

    // MARK: Playback and Up Next

    /// Applies `update` to the listener's playback of the episode or song (none yet: from the
    /// start); an episode's is reported to the listener's phones as the daemon's own action.
    /// - Throws: `not_found` when there is no such episode or song; `invalid_request` for a bad update.
    func updatePlayback(_ listener: String, _ media: PlaybackMedia, id: Int64, _ update: PlaybackUpdate, now: Date) async throws -> Playback
    /// Every episode of the podcast played, for the listener (their positions kept).
    func markPlayed(_ listener: String, podcastId: Int64, now: Date) async throws
    /// The listener's playbacks of a podcast's episodes, by episode id.
    func playbacks(_ listener: String, podcastId: Int64) async throws -> [Int64: Playback]
    /// The listener's playbacks of these songs or episodes, by id.
    func playbacks(_ listener: String, _ media: PlaybackMedia, ids: [Int64]) async throws -> [Int64: Playback]
    /// The listener's list in order; entries whose episode or song is gone are left out.
    func upNextEntries(_ listener: String) async throws -> [UpNextEntry]
    /// Replaces the listener's list; the same item twice keeps its first place.
    /// - Throws: `not_found` naming the first missing item (nothing changed); `invalid_request`
    ///   for more than ``UpNext/limit`` items.
    func setUpNext(_ listener: String, _ entries: [UpNextEntry]) async throws

    // MARK: Bookmarks

    /// Adds a bookmark to an episode or song. - Throws: `not_found` when there is no such one.
    func addBookmark(_ listener: String, _ media: PlaybackMedia, id: Int64, seconds: Double, note: String?, now: Date) async throws -> BookmarkRecord
    /// The listener's bookmarks, of one episode or song or (nil) all; by item, then time.
    func bookmarks(_ listener: String, _ media: PlaybackMedia?, id: Int64?) async throws -> [BookmarkRecord]
    /// Changes a bookmark's note. - Throws: `not_found` unless it is the listener's.
    func updateBookmark(_ listener: String, id: Int64, note: String?) async throws -> BookmarkRecord
    /// - Throws: `not_found` unless it is the listener's.
    func deleteBookmark(_ listener: String, id: Int64) async throws

    // MARK: Transcripts, searched

    /// Claims up to `limit` episodes whose transcript is to be fetched and indexed, marking them
    /// taken at `now`: those never indexed, those whose feed names another transcript since,
    /// those claimed before `claimedBefore` and never finished (a daemon stopped mid-way), and
    /// those that failed before `retryBefore` fewer than ``TranscriptLine/maximumAttempts`` times.
    func claimTranscripts(limit: Int, now: Date, claimedBefore: Date, retryBefore: Date) async throws -> [(episodeId: Int64, url: String)]
    /// Replaces the episode's indexed lines with `cues` from `url`, in one transaction.
    func indexTranscript(episodeId: Int64, url: String, cues: [TranscriptCue], now: Date) async throws
    /// The transcript at `url` could not be had or read: kept with the reason, tried again later.
    func transcriptFailed(episodeId: Int64, url: String, error: FerryError, now: Date) async throws
    /// The lines of the listener's podcasts' transcripts that have all the query's words and
    /// phrases, best first among the newest ``TranscriptLine/mostRanked`` (of one podcast when given).
    func searchTranscripts(_ listener: String, _ query: TranscriptQuery, podcastId: Int64?, limit: Int) async throws -> [TranscriptLine]
    /// Of the listener's podcasts' episodes that name a transcript: how many are indexed, waiting, failed.
    func transcriptIndexStatus(_ listener: String) async throws -> TranscriptIndexStatus

    // MARK: Playlists (named queues beside Up Next)

    /// The listener's playlists by name, each with its items in order; items whose episode or
    /// song is gone are left out.
    func playlists(_ listener: String) async throws -> [PlaylistRecord]
    /// - Throws: `not_found` unless it is the listener's.
    func playlist(_ listener: String, id: Int64) async throws -> PlaylistRecord
    /// - Parameter name: already validated (``Playlist/validated(name:)``).
    /// - Throws: `invalid_state` for a name the listener already has; `not_found` naming the first
    ///   missing item; `invalid_request` for more than ``Playlist/limit`` items (nothing changed).
    func createPlaylist(_ listener: String, name: String, entries: [UpNextEntry], now: Date) async throws -> PlaylistRecord
    /// - Throws: `not_found` unless it is the listener's; `invalid_state` for a name they already have.
    func renamePlaylist(_ listener: String, id: Int64, name: String, now: Date) async throws
    /// - Throws: `not_found` unless it is the listener's.
    func deletePlaylist(_ listener: String, id: Int64) async throws
    /// Replaces a playlist's items, as ``setUpNext(_:_:)`` replaces Up Next.
    /// - Throws: `not_found` unless it is the listener's, or naming the first missing item.
    func setPlaylistEntries(_ listener: String, id: Int64, _ entries: [UpNextEntry], now: Date) async throws
    /// In one transaction, takes the item out of `from` (nil: it is only added) and puts it at
    /// the end of `to`, where it stays in its place if it is there already.
    /// - Throws: `not_found` for a missing item, a playlist not the listener's, or an item not in
    ///   `from`; `invalid_request` when `to` is full or is `from`.
    func moveEntry(_ listener: String, _ entry: UpNextEntry, from: PlaylistPlace?, to: PlaylistPlace, now: Date) async throws

    // MARK: Sync with phones (times in whole seconds since 1970, as the gpodder.net API counts)

    // (Users are accounts: ``AccountStore``.)
    func syncDevices(user: String) async throws -> [(id: String, caption: String, type: String)]
    /// Creates the device, or changes what is given of its caption and type.
    func updateSyncDevice(user: String, id: String, caption: String?, type: String?, now: Date) async throws
    /// The user's subscriptions' feed URLs, and those their phones added that are not fetched yet.
    func syncSubscriptions(user: String) async throws -> [String]
    /// What changed in the user's subscriptions at or after `since`: each URL's last change.
    /// Every subscription made or ended anywhere (web app, CLI, OPML, a moved feed) is logged by
    /// the store itself.
    func syncSubscriptionChanges(user: String, since: Int64) async throws -> (add: [String], remove: [String])
    /// Each feed's last change at or after `since` (every feed's when nil), oldest first.
    func syncSubscriptionStates(user: String, since: Int64?) async throws -> [SyncSubscriptionState]
    /// Marks the feed's last change, a removal, as a deletion (Open Podcast API).
    /// - Returns: its `seq`, the deletion's id; nil when the last change is not a removal.
    func markSyncDeletion(user: String, url: String) async throws -> Int64?
    /// The user's deletion `id` (``markSyncDeletion(user:url:)``'s), if there is one.
    func syncDeletion(user: String, id: Int64) async throws -> SyncSubscriptionState?
    /// A phone's additions the user is not subscribed to become pending; its removals of pending
    /// ones are dropped. The device is created if new.
    /// - Returns: the removals that are the user's subscriptions, for the caller to unsubscribe.
    func applySyncSubscriptions(user: String, device: String, add: [String], remove: [String], now: Date) async throws -> [Int64]
    /// Every user's pending URLs, oldest first.
    func syncPending() async throws -> [(user: String, url: String)]
    /// A pending URL is the user's subscription now, or failed with `error`.
    func resolvePending(user: String, _ url: String, error: String?) async throws
    /// Stores a phone's actions in one transaction, each applied to the user's playback
    /// (``Playback/after(_:now:)``).
    func storeEpisodeActions(_ actions: [EpisodeAction], user: String, now: Date) async throws
    /// The user's actions received at or after `since`, oldest first; `aggregated`: only each
    /// episode's last.
    func episodeActions(user: String, since: Int64, podcast: String?, device: String?, aggregated: Bool) async throws -> [EpisodeAction]

    // MARK: Refreshing, one member at a time

    /// `body`, unless another daemon on this store is refreshing feeds: then nil at once (it
    /// refreshes what is due). A cluster takes a PostgreSQL advisory lock, which a member that
    /// dies gives up with its connection; one machine has only its own daemon.
    func duringRefreshTurn<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) async throws -> Result?
    /// `body` once no other daemon on this store is refreshing this podcast (it waits).
    func refreshingPodcast<Result: Sendable>(_ id: Int64, _ body: @escaping @Sendable () async throws -> Result) async throws -> Result
}

/// A line of an indexed transcript that a search found.
package struct TranscriptLine: Sendable, Hashable {
    package var episodeId: Int64
    package var seconds: Double
    package var speaker: String?
    package var text: String

    package init(episodeId: Int64, seconds: Double, speaker: String?, text: String) {
        self.episodeId = episodeId
        self.seconds = seconds
        self.speaker = speaker
        self.text = text
    }

    /// A transcript that failed this many times is not fetched again (until its feed names another).
    package static let maximumAttempts = 3
    /// A search ranks at most this many lines found, the newest indexed: past it, ranking costs
    /// more than a listener waits, for a word said in every episode.
    package static let mostRanked = 500
}

/// A row of the `playlist` table with its items (`playlistItem`) in order.
package struct PlaylistRecord: Sendable, Hashable {
    package var id: Int64
    package var name: String
    package var updatedAt: Date
    package var entries: [UpNextEntry]

    package init(id: Int64, name: String, updatedAt: Date, entries: [UpNextEntry]) {
        self.id = id
        self.name = name
        self.updatedAt = updatedAt
        self.entries = entries
    }
}

/// A row of the `bookmark` table: a listener's moment in an episode or song.
package struct BookmarkRecord: Sendable, Hashable {
    package var id: Int64
    package var media: PlaybackMedia
    package var mediaId: Int64
    package var seconds: Double
    package var note: String?
    package var createdAt: Date

    package init(id: Int64, media: PlaybackMedia, mediaId: Int64, seconds: Double, note: String?, createdAt: Date) {
        self.id = id
        self.media = media
        self.mediaId = mediaId
        self.seconds = seconds
        self.note = note
        self.createdAt = createdAt
    }
}

/// What a playback belongs to.
package enum PlaybackMedia: String, Sendable {
    case episode, track

    /// The table whose row it must name, and its key.
    package var table: String { self == .episode ? "episode" : "track" }
    package var key: String { self == .episode ? "id" : "trackId" }
    package var noun: String { self == .episode ? "episode" : "song" }
}

extension ListeningStore {
    package func mergeEpisodes(podcastId: Int64, _ episodes: [FeedEpisode], markNew: Bool) async throws -> [EpisodeRecord] {
        try await mergeEpisodes(podcastId: podcastId, episodes, markNew: markNew, now: Date())
    }

    package func updatePlayback(_ listener: String, _ media: PlaybackMedia, id: Int64, _ update: PlaybackUpdate) async throws -> Playback {
        try await updatePlayback(listener, media, id: id, update, now: Date())
    }

    package func markPlayed(_ listener: String, podcastId: Int64) async throws { try await markPlayed(listener, podcastId: podcastId, now: Date()) }

    @discardableResult
    package func subscribe(_ listener: String, podcastId: Int64) async throws -> Subscription {
        try await subscribe(listener, podcastId: podcastId, now: Date())
    }

    func updateSyncDevice(user: String, id: String, caption: String?, type: String?) async throws {
        try await updateSyncDevice(user: user, id: id, caption: caption, type: type, now: Date())
    }

    func applySyncSubscriptions(user: String, device: String, add: [String], remove: [String]) async throws -> [Int64] {
        try await applySyncSubscriptions(user: user, device: device, add: add, remove: remove, now: Date())
    }

    func storeEpisodeActions(_ actions: [EpisodeAction], user: String) async throws {
        try await storeEpisodeActions(actions, user: user, now: Date())
    }
}
