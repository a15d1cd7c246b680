import Foundation

/// One iTunes catalog result as the API returns it, with what Ferry knows of it: the transfer
/// of its downloaded preview, or the subscription of a podcast.
public struct CatalogResult: Codable, Sendable, Hashable, Identifiable {
    /// What a result is.
    public enum Kind: String, Codable, Sendable {
        /// A song, usually with a 30-second `previewURL`.
        case song
        /// A podcast, with the `feedURL` to subscribe to.
        case podcast
        /// Anything else the catalog returned.
        case other
    }

    /// The track id for songs, the collection id for podcasts.
    public var id: Int64
    /// Song, podcast or something else.
    public var kind: Kind
    /// The catalog's track id (songs).
    public var trackId: Int64?
    /// The catalog's collection id: a song's album, or the podcast itself.
    public var collectionId: Int64?
    /// Track name for songs, podcast name for podcasts.
    public var title: String
    /// The artist, or the podcast's author.
    public var artist: String?
    /// The collection's name: a song's album.
    public var collection: String?
    /// The cover image.
    public var artworkURL: String?
    /// A song's 30-second preview (``DaemonClient/downloadPreview(trackId:session:)`` fetches it).
    public var previewURL: String?
    /// A podcast's feed URL (``DaemonClient/subscribe(url:catalogId:)``).
    public var feedURL: String?
    /// A song's length in seconds.
    public var durationSeconds: Double?
    /// When it was released.
    public var releaseDate: Date?
    /// The catalog's primary genre.
    public var genre: String?
    /// Whether the catalog marks it explicit.
    public var explicit: Bool?
    /// The download of this song's preview, if one was started.
    public var download: Transfer?
    /// The subscription to this podcast, if subscribed.
    public var podcastId: Int64?
    /// Where the listener is in this song; nil: never started.
    public var playback: Playback?

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(
        id: Int64, kind: Kind, trackId: Int64? = nil, collectionId: Int64? = nil, title: String, artist: String? = nil,
        collection: String? = nil, artworkURL: String? = nil, previewURL: String? = nil, feedURL: String? = nil,
        durationSeconds: Double? = nil, releaseDate: Date? = nil, genre: String? = nil, explicit: Bool? = nil,
        download: Transfer? = nil, podcastId: Int64? = nil, playback: Playback? = nil
    ) {
        self.playback = playback
        self.id = id
        self.kind = kind
        self.trackId = trackId
        self.collectionId = collectionId
        self.title = title
        self.artist = artist
        self.collection = collection
        self.artworkURL = artworkURL
        self.previewURL = previewURL
        self.feedURL = feedURL
        self.durationSeconds = durationSeconds
        self.releaseDate = releaseDate
        self.genre = genre
        self.explicit = explicit
        self.download = download
        self.podcastId = podcastId
    }
}

/// `GET /v1/catalog/search`.
public struct CatalogSearchResponse: Codable, Sendable {
    /// The results, in the catalog's order.
    public var results: [CatalogResult]
    /// Wraps search results.
    public init(results: [CatalogResult]) { self.results = results }
}

/// `POST /v1/catalog/previews`: download a song's 30-second preview into `Music/`.
public struct PreviewRequest: Codable, Sendable {
    /// The song's catalog track id (``CatalogResult/trackId``).
    public var trackId: Int64
    /// The session the download belongs to; `web` when absent.
    public var session: String?
    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(trackId: Int64, session: String? = nil) {
        self.trackId = trackId
        self.session = session
    }
}

/// `POST /v1/podcasts`: subscribe by feed URL, Apple Podcasts page URL, or catalog id.
public struct SubscribeRequest: Codable, Sendable {
    /// A feed URL or an Apple Podcasts page URL.
    public var url: String?
    /// A podcast's catalog id (``CatalogResult/id``), instead of `url`.
    public var catalogId: Int64?
    /// For a private feed (HTTP Basic authentication): the user name, with ``password``. They
    /// may also come in the URL (`https://user:password@host/feed`). Sent for the feed and its
    /// episodes on the same host; the password is never shown again.
    public var user: String?
    public var password: String?
    /// Give either `url` or `catalogId`.
    public init(url: String? = nil, catalogId: Int64? = nil, user: String? = nil, password: String? = nil) {
        self.url = url
        self.catalogId = catalogId
        self.user = user
        self.password = password
    }
}

/// `PATCH /v1/podcasts/{id}`.
public struct PodcastSettings: Codable, Sendable {
    /// Download the newest N episodes by themselves (0: never).
    public var autoDownload: Int?
    /// Keep only the newest N downloaded episodes (0: keep all).
    public var keepLatest: Int?
    /// The player's speed for this podcast, 0.5–3 (0: back to the player's own).
    public var playbackSpeed: Double?
    /// List episodes oldest first (a serial), or newest first.
    public var oldestFirst: Bool?
    /// Minutes between fetches of its feed, 15 to 10,080 (a week); 0: back to the daemon's interval.
    public var refreshMinutes: Int?
    /// Which file downloads take when an episode offers several (the household's, as refreshMinutes).
    public var enclosureChoice: EnclosureChoice?
    /// Settings to change; a nil field keeps its current value.
    public init(
        autoDownload: Int? = nil, keepLatest: Int? = nil, playbackSpeed: Double? = nil, oldestFirst: Bool? = nil, refreshMinutes: Int? = nil,
        enclosureChoice: EnclosureChoice? = nil
    ) {
        self.enclosureChoice = enclosureChoice
        self.autoDownload = autoDownload
        self.keepLatest = keepLatest
        self.playbackSpeed = playbackSpeed
        self.oldestFirst = oldestFirst
        self.refreshMinutes = refreshMinutes
    }
}

/// `GET /v1/podcasts`.
public struct PodcastList: Codable, Sendable {
    /// Every subscription.
    public var podcasts: [Podcast]
    /// Wraps the subscriptions.
    public init(podcasts: [Podcast]) { self.podcasts = podcasts }
}

/// `POST /v1/podcasts/{id}/refresh` and `POST /v1/podcasts/refresh`.
public struct RefreshResponse: Codable, Sendable {
    /// A podcast whose feed could not be refreshed, and why.
    public struct Failure: Codable, Sendable, Hashable {
        /// The ``Podcast/id`` of the subscription.
        public var podcastId: Int64
        /// What went wrong (also kept in the podcast's `error`).
        public var error: TransferErrorInfo
        /// Makes one from its fields; each parameter sets the property of the same name.
        public init(podcastId: Int64, error: TransferErrorInfo) {
            self.podcastId = podcastId
            self.error = error
        }
    }

    /// How many podcasts were refreshed.
    public var refreshed: Int
    /// Episodes that appeared.
    public var newEpisodes: Int
    /// The podcasts that could not be refreshed.
    public var failures: [Failure]

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(refreshed: Int, newEpisodes: Int, failures: [Failure]) {
        self.refreshed = refreshed
        self.newEpisodes = newEpisodes
        self.failures = failures
    }
}

/// `POST /v1/podcasts/import`: the outcome of an OPML import.
public struct ImportResponse: Codable, Sendable {
    /// A feed of the OPML file that could not be subscribed to, and why.
    public struct Failure: Codable, Sendable, Hashable {
        /// The feed URL as the OPML file gives it.
        public var url: String
        /// What went wrong.
        public var error: TransferErrorInfo
        /// Makes one from its fields; each parameter sets the property of the same name.
        public init(url: String, error: TransferErrorInfo) {
            self.url = url
            self.error = error
        }
    }

    /// The podcasts the file names that are now subscribed to (including ones that already were).
    public var subscribed: [Podcast]
    /// The feeds that could not be subscribed to.
    public var failures: [Failure]

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(subscribed: [Podcast], failures: [Failure]) {
        self.subscribed = subscribed
        self.failures = failures
    }
}

/// `POST /v1/episodes/{id}/download`.
public struct EpisodeDownloadRequest: Codable, Sendable {
    /// The session the download belongs to; `web` when absent.
    public var session: String?
    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(session: String? = nil) { self.session = session }
}

/// `POST /v1/podcasts/ping`: feeds a Podping relay (or any publisher's notice) says changed.
public struct FeedPing: Codable, Sendable {
    /// The feeds' URLs, as their subscriptions know them.
    public var urls: [String]
    public init(urls: [String]) { self.urls = urls }
    /// The most URLs one ping names.
    public static let limit = 100
}

/// What a ``FeedPing`` did: the podcasts fetched at once, those fetched within the last minute
/// (a ping repeated is not a reason to fetch again), and the URLs of no subscription.
public struct FeedPingResponse: Codable, Sendable, Hashable {
    public var refreshed: [Int64]
    public var skipped: [Int64]
    public var unknown: [String]
    public var failures: [RefreshResponse.Failure]
    public init(refreshed: [Int64] = [], skipped: [Int64] = [], unknown: [String] = [], failures: [RefreshResponse.Failure] = []) {
        self.refreshed = refreshed
        self.skipped = skipped
        self.unknown = unknown
        self.failures = failures
    }
}
