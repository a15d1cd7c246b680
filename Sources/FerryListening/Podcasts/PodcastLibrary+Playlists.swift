import FerryCore
import FerryKit
import Foundation

/// The listener's playlists: named queues beside Up Next, their items shown as Up Next's are.
extension PodcastLibrary {
    /// By name (case aside), each with how many items it holds and how long they last.
    package func playlists() async throws -> PlaylistList {
        let records = try await store.playlists(listener)
        var seen = Set<UpNextEntry>()
        let durations = Dictionary(
            try await items(records.flatMap(\.entries).filter { seen.insert($0).inserted }).map { (UpNextEntry(kind: $0.kind, id: $0.id), $0.durationSeconds ?? 0) },
            uniquingKeysWith: { first, _ in first }
        )
        return PlaylistList(
            playlists: records.sorted(by: Self.byName).map { record in
                PlaylistSummary(
                    id: record.id, name: record.name, count: record.entries.count,
                    durationSeconds: record.entries.reduce(0) { $0 + (durations[$1] ?? 0) }, updatedAt: record.updatedAt
                )
            }
        )
    }

    package func playlist(id: Int64) async throws -> Playlist {
        try await shown(try await store.playlist(listener, id: id))
    }

    package func createPlaylist(_ new: NewPlaylist) async throws -> Playlist {
        let name = try Playlist.validated(name: new.name)
        return try await shown(try await store.createPlaylist(listener, name: name, entries: new.items ?? [], now: Date()))
    }

    package func renamePlaylist(id: Int64, _ change: PlaylistRename) async throws -> Playlist {
        try await store.renamePlaylist(listener, id: id, name: try Playlist.validated(name: change.name), now: Date())
        return try await playlist(id: id)
    }

    package func deletePlaylist(id: Int64) async throws {
        try await store.deletePlaylist(listener, id: id)
    }

    /// Replaces the items (the order is the list's; the same item twice keeps its first place).
    package func setPlaylistItems(id: Int64, _ order: UpNextOrder) async throws -> Playlist {
        try await store.setPlaylistEntries(listener, id: id, order.items, now: Date())
        return try await playlist(id: id)
    }

    /// Puts an item at the end (where it is, if it is there already).
    package func addToPlaylist(id: Int64, _ entry: UpNextEntry) async throws -> Playlist {
        try await store.moveEntry(listener, entry, from: nil, to: .playlist(id), now: Date())
        return try await playlist(id: id)
    }

    /// Takes an item out of one list and puts it at the end of another (see ``ListeningStore/moveEntry(_:_:from:to:now:)``).
    package func move(_ move: PlaylistMove) async throws {
        try await store.moveEntry(listener, move.entry, from: move.from, to: move.to, now: Date())
    }

    private static func byName(_ a: PlaylistRecord, _ b: PlaylistRecord) -> Bool {
        let order = a.name.localizedCaseInsensitiveCompare(b.name)
        return order == .orderedSame ? a.id < b.id : order == .orderedAscending
    }

    private func shown(_ record: PlaylistRecord) async throws -> Playlist {
        Playlist(id: record.id, name: record.name, items: try await items(record.entries), updatedAt: record.updatedAt)
    }
}
