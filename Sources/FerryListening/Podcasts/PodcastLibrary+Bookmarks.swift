import FerryCore
import FerryKit
import Foundation

/// The listener's bookmarks, with what each is in (the episode's or song's title, its show).
extension PodcastLibrary {
    package func addBookmark(_ media: PlaybackMedia, id: Int64, _ new: NewBookmark) async throws -> Bookmark {
        try new.validate()
        let note = new.note.flatMap { $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : $0 }
        let record = try await store.addBookmark(listener, media, id: id, seconds: new.seconds, note: note, now: Date())
        return try await named([record])[0]
    }

    /// Of one episode or song, or (nil) all of the listener's: newest item first, each by time.
    package func bookmarks(_ media: PlaybackMedia? = nil, id: Int64? = nil) async throws -> [Bookmark] {
        let records = try await store.bookmarks(listener, media, id: id)
        let newestFirst = Dictionary(grouping: records) { "\($0.media.rawValue)\($0.mediaId)" }.values
            .sorted { ($0.map(\.createdAt).max() ?? .distantPast) > ($1.map(\.createdAt).max() ?? .distantPast) }
            .flatMap { $0.sorted { ($0.seconds, $0.id) < ($1.seconds, $1.id) } }
        return try await named(newestFirst)
    }

    package func updateBookmark(id: Int64, _ change: BookmarkNote) async throws -> Bookmark {
        try change.validate()
        let note = change.note.flatMap { $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : $0 }
        return try await named([try await store.updateBookmark(listener, id: id, note: note)])[0]
    }

    package func deleteBookmark(id: Int64) async throws {
        try await store.deleteBookmark(listener, id: id)
    }

    /// The records with their items' and shows' titles.
    private func named(_ records: [BookmarkRecord]) async throws -> [Bookmark] {
        let tracks = try await store.tracks(ids: records.filter { $0.media == .track }.map(\.mediaId))
        var episodes: [Int64: EpisodeRecord] = [:]
        var shows: [Int64: String] = [:]
        for id in Set(records.filter { $0.media == .episode }.map(\.mediaId)) {
            guard let episode = try await store.episode(id: id) else { continue }
            episodes[id] = episode
            if shows[episode.podcastId] == nil { shows[episode.podcastId] = try await store.podcast(id: episode.podcastId)?.title }
        }
        return records.map { record in
            var bookmark = Bookmark(
                id: record.id, media: record.media.rawValue, mediaId: record.mediaId, seconds: record.seconds, note: record.note,
                createdAt: record.createdAt)
            if let episode = episodes[record.mediaId], record.media == .episode {
                bookmark.title = episode.readableTitle
                bookmark.podcastId = episode.podcastId
                bookmark.showTitle = shows[episode.podcastId]
            } else if let track = tracks[record.mediaId], record.media == .track {
                bookmark.title = track.title
                bookmark.showTitle = track.artist
            }
            return bookmark
        }
    }

    /// The JSON export: the listener's subscriptions and bookmarks (`GET /v1/podcasts/export?format=json`).
    package func exportJSON() async throws -> LibraryExport {
        let subscriptions = try await store.subscriptions(of: listener).map { LibraryExport.Subscription(feedURL: $0.podcast.feedURL, title: $0.podcast.title) }
        return LibraryExport(subscriptions: subscriptions, bookmarks: try await bookmarks())
    }
}
