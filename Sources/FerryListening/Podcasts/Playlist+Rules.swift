import FerryKit

/// What every ``ListeningStore`` checks and says about playlists.
extension Playlist {
    /// The items without repeats (an item keeps its first place).
    /// - Throws: `invalid_request` for more than ``limit`` items.
    package static func validated(_ entries: [UpNextEntry]) throws(FerryError) -> [UpNextEntry] {
        try UpNext.validated(entries, list: "A playlist")
    }

    package static func missing(_ id: Int64) -> FerryError {
        FerryError(.notFound, "You have no playlist \(id). `ferry playlist ls` lists yours.")
    }

    package static func taken(_ name: String) -> FerryError {
        FerryError(.invalidState, "You already have a playlist named “\(name)”: choose another name.")
    }

    package static func full(_ place: PlaylistPlace) -> FerryError {
        FerryError.invalidRequest("\(place) is full: it holds at most \(limit) items.")
    }

    package static func notIn(_ entry: UpNextEntry, _ place: PlaylistPlace) -> FerryError {
        FerryError(.notFound, "\(entry.kind == .episode ? "Episode" : "Song") \(entry.id) is not in \(place).")
    }

    package static func sameList(_ place: PlaylistPlace) -> FerryError {
        FerryError.invalidRequest("The item is in \(place) already: move it to another list, or reorder this one.")
    }
}
