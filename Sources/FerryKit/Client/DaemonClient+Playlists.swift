import FerryModel
import Foundation

/// The listener's playlists: named queues of episodes and songs beside Up Next.
extension DaemonClient {
    /// Every playlist of the listener, by name, with how many items each holds.
    public func playlists() async throws -> [PlaylistSummary] {
        let list: PlaylistList = try await send(.GET, "/v1/playlists")
        return list.playlists
    }

    /// A playlist with its items in order.
    public func playlist(_ id: Int64) async throws -> Playlist {
        try await send(.GET, "/v1/playlists/\(id)")
    }

    /// Makes a playlist. - Throws: `invalid_state` when the listener has one of that name.
    public func createPlaylist(_ name: String, items: [UpNextEntry] = []) async throws -> Playlist {
        try await send(.POST, "/v1/playlists", body: NewPlaylist(name: name, items: items))
    }

    public func renamePlaylist(_ id: Int64, to name: String) async throws -> Playlist {
        try await send(.PATCH, "/v1/playlists/\(id)", body: PlaylistRename(name: name))
    }

    public func deletePlaylist(_ id: Int64) async throws {
        let _: Empty = try await send(.DELETE, "/v1/playlists/\(id)")
    }

    /// Replaces the items with these, in this order.
    public func setPlaylistItems(_ id: Int64, _ items: [UpNextEntry]) async throws -> Playlist {
        try await send(.PUT, "/v1/playlists/\(id)/items", body: UpNextOrder(items: items))
    }

    /// Puts an episode or song at the end of the playlist (where it is, if it is there).
    public func addToPlaylist(_ id: Int64, _ item: UpNextEntry) async throws -> Playlist {
        try await send(.POST, "/v1/playlists/\(id)/items", body: item)
    }

    /// Takes an item out of `from` and puts it at the end of `to`, in one step.
    public func moveItem(_ item: UpNextEntry, from: PlaylistPlace, to: PlaylistPlace) async throws {
        let _: Empty = try await send(.POST, "/v1/playlists/move", body: PlaylistMove(item, from: from, to: to))
    }
}
