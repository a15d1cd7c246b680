import FerryModel
import Foundation

/// The listener's bookmarks: moments of episodes and songs, with notes.
extension DaemonClient {
    /// Bookmarks `seconds` into an episode.
    public func addBookmark(episode id: Int64, seconds: Double, note: String? = nil) async throws -> Bookmark {
        try await send(.POST, "/v1/episodes/\(id)/bookmarks", body: NewBookmark(seconds: seconds, note: note))
    }

    /// Bookmarks `seconds` into a song (by its catalog track id).
    public func addBookmark(track id: Int64, seconds: Double, note: String? = nil) async throws -> Bookmark {
        try await send(.POST, "/v1/tracks/\(id)/bookmarks", body: NewBookmark(seconds: seconds, note: note))
    }

    /// Every bookmark of the listener, or one episode's.
    public func bookmarks(episode id: Int64? = nil) async throws -> [Bookmark] {
        let list: BookmarkList = try await send(.GET, id.map { "/v1/episodes/\($0)/bookmarks" } ?? "/v1/bookmarks")
        return list.bookmarks
    }

    /// A new note (nil or empty: none).
    public func updateBookmark(_ id: Int64, note: String?) async throws -> Bookmark {
        try await send(.PATCH, "/v1/bookmarks/\(id)", body: BookmarkNote(note: note))
    }

    public func deleteBookmark(_ id: Int64) async throws {
        let _: Empty = try await send(.DELETE, "/v1/bookmarks/\(id)")
    }

    /// The subscriptions and bookmarks as JSON (`ferry podcast export --json`).
    public func exportLibrary() async throws -> LibraryExport {
        try await send(.GET, "/v1/podcasts/export?format=json")
    }
}
