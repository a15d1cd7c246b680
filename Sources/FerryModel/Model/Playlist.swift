import Foundation

/// A named queue beside Up Next ("road trip"): episodes and songs in the listener's order, each
/// listener's own (`/v1/playlists`, `ferry playlist`). Unlike Up Next, a playlist keeps its
/// items when they play.
public struct Playlist: Codable, Sendable, Hashable, Identifiable {
    public var id: Int64
    public var name: String
    public var items: [UpNextItem]
    public var updatedAt: Date

    public init(id: Int64, name: String, items: [UpNextItem], updatedAt: Date) {
        self.id = id
        self.name = name
        self.items = items
        self.updatedAt = updatedAt
    }

    /// The most items a playlist holds (as many as Up Next).
    public static let limit = UpNext.limit
    /// The longest name, in characters.
    public static let nameLimit = 100

    /// The name without the spaces around it.
    /// - Throws: `invalid_request` for an empty one, one longer than ``nameLimit`` or one with
    ///   control characters.
    public static func validated(name: String) throws(FerryError) -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= nameLimit,
            !trimmed.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) })
        else {
            throw FerryError.invalidRequest("A playlist's name is 1 to \(nameLimit) characters, on one line; “\(name.prefix(40))” is not.")
        }
        return trimmed
    }
}

/// A playlist in the list of them (`GET /v1/playlists`): what it holds, not the items.
public struct PlaylistSummary: Codable, Sendable, Hashable, Identifiable {
    public var id: Int64
    public var name: String
    public var count: Int
    /// The items' durations added up (those that have one).
    public var durationSeconds: Double
    public var updatedAt: Date

    public init(id: Int64, name: String, count: Int, durationSeconds: Double, updatedAt: Date) {
        self.id = id
        self.name = name
        self.count = count
        self.durationSeconds = durationSeconds
        self.updatedAt = updatedAt
    }
}

/// `GET /v1/playlists`: by name.
public struct PlaylistList: Codable, Sendable, Hashable {
    public var playlists: [PlaylistSummary]

    public init(playlists: [PlaylistSummary]) { self.playlists = playlists }
}

/// `POST /v1/playlists`: a name, and the items to start with.
public struct NewPlaylist: Codable, Sendable, Hashable {
    public var name: String
    public var items: [UpNextEntry]?

    public init(name: String, items: [UpNextEntry]? = nil) {
        self.name = name
        self.items = items
    }
}

/// `PATCH /v1/playlists/{id}`: a new name.
public struct PlaylistRename: Codable, Sendable, Hashable {
    public var name: String

    public init(name: String) { self.name = name }
}

/// Up Next or one of the listener's playlists: where ``PlaylistMove`` takes an item from and to.
/// In JSON, `"up-next"` or the playlist's id.
public enum PlaylistPlace: Codable, Sendable, Hashable, CustomStringConvertible {
    case upNext
    case playlist(Int64)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let id = try? container.decode(Int64.self) {
            self = .playlist(id)
        } else if let text = try? container.decode(String.self), let place = PlaylistPlace(text) {
            self = place
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "A place is \"up-next\" or a playlist's id.")
        }
    }

    /// `up-next` or a playlist's id, as the CLI and JSON spell them.
    public init?(_ text: String) {
        if text == "up-next" {
            self = .upNext
        } else if let id = Int64(text) {
            self = .playlist(id)
        } else {
            return nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .upNext: try container.encode("up-next")
        case .playlist(let id): try container.encode(id)
        }
    }

    public var description: String {
        switch self {
        case .upNext: "Up Next"
        case .playlist(let id): "playlist \(id)"
        }
    }
}

/// `POST /v1/playlists/move`: an item taken out of one list and put at the end of another, in
/// one transaction. Without `from`, it is only added.
public struct PlaylistMove: Codable, Sendable, Hashable {
    public var kind: UpNextEntry.Kind
    public var id: Int64
    public var from: PlaylistPlace?
    public var to: PlaylistPlace

    public init(_ entry: UpNextEntry, from: PlaylistPlace?, to: PlaylistPlace) {
        self.kind = entry.kind
        self.id = entry.id
        self.from = from
        self.to = to
    }

    public var entry: UpNextEntry { UpNextEntry(kind: kind, id: id) }
}
