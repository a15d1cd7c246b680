import FerryKit

/// What every ``ListeningStore`` checks before it replaces Up Next or a playlist's items.
extension UpNext {
    /// The list without repeats (an item keeps its first place).
    /// - Parameter list: what the list is, for the error (`Up Next`, `A playlist`).
    /// - Throws: `invalid_request` for more than ``limit`` items.
    package static func validated(_ entries: [UpNextEntry], list: String = "Up Next") throws(FerryError) -> [UpNextEntry] {
        var seen = Set<UpNextEntry>()
        let unique = entries.filter { seen.insert($0).inserted }
        guard unique.count <= limit else {
            throw FerryError.invalidRequest("\(list) holds at most \(limit) items; this list has \(unique.count).")
        }
        return unique
    }

    /// The error for an item that does not exist.
    package static func missing(_ entry: UpNextEntry) -> FerryError {
        FerryError(.notFound, entry.kind == .episode ? "There is no episode \(entry.id)." : "Song \(entry.id) is not in the library: download its preview first.")
    }
}
