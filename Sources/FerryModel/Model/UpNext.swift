import Foundation

/// What plays after the current episode or song: the listener's Up Next, kept by the daemon so
/// every browser shows the same list (`GET`/`PUT /v1/up-next`).
public struct UpNext: Codable, Sendable, Hashable {
    public var items: [UpNextItem]

    public init(items: [UpNextItem]) { self.items = items }

    /// The most the list holds.
    public static let limit = 500
}

/// An episode or a song in ``UpNext``.
public struct UpNextItem: Codable, Sendable, Hashable {
    public var kind: UpNextEntry.Kind
    /// The episode's id, or the song's catalog track id.
    public var id: Int64
    public var title: String
    /// The podcast's title, or the song's artist.
    public var subtitle: String?
    public var artworkURL: String?
    public var durationSeconds: Double?
    /// Where the web app plays it from: the downloaded file, else (an episode) its stream
    /// through the daemon; none for a song not downloaded.
    public var playURL: String?
    public var playback: Playback?
    /// An episode's podcast, and the player's speed it keeps for it.
    public var podcastId: Int64?
    public var playbackSpeed: Double?

    public init(
        kind: UpNextEntry.Kind, id: Int64, title: String, subtitle: String? = nil, artworkURL: String? = nil,
        durationSeconds: Double? = nil, playURL: String? = nil, playback: Playback? = nil, podcastId: Int64? = nil,
        playbackSpeed: Double? = nil
    ) {
        self.podcastId = podcastId
        self.playbackSpeed = playbackSpeed
        self.kind = kind
        self.id = id
        self.title = title
        self.subtitle = subtitle
        self.artworkURL = artworkURL
        self.durationSeconds = durationSeconds
        self.playURL = playURL
        self.playback = playback
    }
}

/// One place in the list as a client sets it (`PUT /v1/up-next` sends the whole list, in order).
public struct UpNextEntry: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, Hashable {
        case episode, track
    }

    public var kind: Kind
    public var id: Int64

    public init(kind: Kind, id: Int64) {
        self.kind = kind
        self.id = id
    }
}

/// The body of `PUT /v1/up-next`.
public struct UpNextOrder: Codable, Sendable, Hashable {
    public var items: [UpNextEntry]

    public init(items: [UpNextEntry]) { self.items = items }
}
