import Foundation

/// One iTunes catalog result as the API returns it, with what Ferry knows of it: the transfer
/// of its downloaded preview, or the subscription of a podcast.
public struct CatalogResult: Codable, Sendable, Hashable, Identifiable {
    public enum Kind: String, Codable, Sendable {
        case song, podcast, other
    }

    /// The track id for songs, the collection id for podcasts.
    public var id: Int64
    public var kind: Kind
    public var trackId: Int64?
    public var collectionId: Int64?
    /// Track name for songs, podcast name for podcasts.
    public var title: String
    public var artist: String?
    public var collection: String?
    public var artworkURL: String?
    public var previewURL: String?
    public var feedURL: String?
    public var durationSeconds: Double?
    public var releaseDate: Date?
    public var genre: String?
    public var explicit: Bool?
    /// The download of this song's preview, if one was started.
    public var download: Transfer?
    /// The subscription to this podcast, if subscribed.
    public var podcastId: Int64?

    public init(
        id: Int64, kind: Kind, trackId: Int64? = nil, collectionId: Int64? = nil, title: String, artist: String? = nil,
        collection: String? = nil, artworkURL: String? = nil, previewURL: String? = nil, feedURL: String? = nil,
        durationSeconds: Double? = nil, releaseDate: Date? = nil, genre: String? = nil, explicit: Bool? = nil,
        download: Transfer? = nil, podcastId: Int64? = nil
    ) {
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
    public var results: [CatalogResult]
    public init(results: [CatalogResult]) { self.results = results }
}

/// `POST /v1/catalog/previews`: download a song's 30-second preview into `Music/`.
public struct PreviewRequest: Codable, Sendable {
    public var trackId: Int64
    public var session: String?
    public init(trackId: Int64, session: String? = nil) {
        self.trackId = trackId
        self.session = session
    }
}

/// `POST /v1/podcasts`: subscribe by feed URL, Apple Podcasts page URL, or catalog id.
public struct SubscribeRequest: Codable, Sendable {
    /// A feed URL or an Apple Podcasts page URL.
    public var url: String?
    public var catalogId: Int64?
    public init(url: String? = nil, catalogId: Int64? = nil) {
        self.url = url
        self.catalogId = catalogId
    }
}

/// `PATCH /v1/podcasts/{id}`.
public struct PodcastSettings: Codable, Sendable {
    /// Download the newest N episodes by themselves (0: never).
    public var autoDownload: Int?
    /// Keep only the newest N downloaded episodes (0: keep all).
    public var keepLatest: Int?
    public init(autoDownload: Int? = nil, keepLatest: Int? = nil) {
        self.autoDownload = autoDownload
        self.keepLatest = keepLatest
    }
}

/// `GET /v1/podcasts`.
public struct PodcastList: Codable, Sendable {
    public var podcasts: [Podcast]
    public init(podcasts: [Podcast]) { self.podcasts = podcasts }
}

/// `POST /v1/podcasts/{id}/refresh` and `POST /v1/podcasts/refresh`.
public struct RefreshResponse: Codable, Sendable {
    public struct Failure: Codable, Sendable, Hashable {
        public var podcastId: Int64
        public var error: TransferErrorInfo
        public init(podcastId: Int64, error: TransferErrorInfo) {
            self.podcastId = podcastId
            self.error = error
        }
    }

    /// How many podcasts were refreshed.
    public var refreshed: Int
    /// Episodes that appeared.
    public var newEpisodes: Int
    public var failures: [Failure]

    public init(refreshed: Int, newEpisodes: Int, failures: [Failure]) {
        self.refreshed = refreshed
        self.newEpisodes = newEpisodes
        self.failures = failures
    }
}

/// `POST /v1/podcasts/import`: the outcome of an OPML import.
public struct ImportResponse: Codable, Sendable {
    public struct Failure: Codable, Sendable, Hashable {
        public var url: String
        public var error: TransferErrorInfo
        public init(url: String, error: TransferErrorInfo) {
            self.url = url
            self.error = error
        }
    }

    public var subscribed: [Podcast]
    public var failures: [Failure]

    public init(subscribed: [Podcast], failures: [Failure]) {
        self.subscribed = subscribed
        self.failures = failures
    }
}

/// `POST /v1/episodes/{id}/download`.
public struct EpisodeDownloadRequest: Codable, Sendable {
    public var session: String?
    public init(session: String? = nil) { self.session = session }
}
