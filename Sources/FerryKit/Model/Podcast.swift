import Foundation

/// A podcast subscription.
public struct Podcast: Codable, Sendable, Hashable, Identifiable {
    public var id: Int64
    /// The feed's current URL (updated when the feed moves).
    public var feedURL: String
    public var title: String
    public var author: String?
    /// The description as plain text.
    public var descriptionText: String?
    /// The description as sanitised HTML (safe to insert into a page).
    public var descriptionHTML: String?
    public var artworkURL: String?
    public var link: String?
    /// The library folder episodes go to, relative to the library root (`Podcasts/Show`).
    public var folder: String
    /// Download the newest N episodes by themselves (0: never).
    public var autoDownload: Int
    /// Keep only the newest N downloaded episodes (nil: keep all).
    public var keepLatest: Int?
    public var episodeCount: Int
    /// Episodes that arrived since the last look and are not downloaded.
    public var newCount: Int
    public var downloadedCount: Int
    public var refreshedAt: Date?
    /// Why the last refresh failed, if it did.
    public var error: TransferErrorInfo?

    public init(
        id: Int64, feedURL: String, title: String, author: String? = nil, descriptionText: String? = nil,
        descriptionHTML: String? = nil, artworkURL: String? = nil, link: String? = nil, folder: String,
        autoDownload: Int = 0, keepLatest: Int? = nil, episodeCount: Int = 0, newCount: Int = 0,
        downloadedCount: Int = 0, refreshedAt: Date? = nil, error: TransferErrorInfo? = nil
    ) {
        self.id = id
        self.feedURL = feedURL
        self.title = title
        self.author = author
        self.descriptionText = descriptionText
        self.descriptionHTML = descriptionHTML
        self.artworkURL = artworkURL
        self.link = link
        self.folder = folder
        self.autoDownload = autoDownload
        self.keepLatest = keepLatest
        self.episodeCount = episodeCount
        self.newCount = newCount
        self.downloadedCount = downloadedCount
        self.refreshedAt = refreshedAt
        self.error = error
    }
}

/// Where an episode stands, derived from its transfer and the file on disk.
public enum EpisodeState: String, Codable, Sendable, CaseIterable {
    case notDownloaded
    /// Queued, running or waiting to retry; see the episode's `transfer` for progress.
    case downloading
    case paused
    case failed
    case downloaded
}

/// An episode of a podcast.
public struct Episode: Codable, Sendable, Hashable, Identifiable {
    public var id: Int64
    public var podcastId: Int64
    public var guid: String
    public var title: String
    public var published: Date?
    public var durationSeconds: Double?
    public var enclosureURL: String?
    public var enclosureLength: Int64?
    public var enclosureType: String?
    /// Sanitised HTML, safe to insert into a page.
    public var descriptionHTML: String?
    public var descriptionText: String?
    public var season: Int?
    public var episodeNumber: Int?
    /// `full`, `trailer` or `bonus`.
    public var episodeType: String?
    public var explicit: Bool?
    public var link: String?
    public var artworkURL: String?
    public var chaptersURL: String?
    public var transcriptURL: String?
    public var isNew: Bool
    public var state: EpisodeState
    /// The transfer downloading (or that downloaded) it.
    public var transfer: Transfer?
    /// Absolute path of the downloaded file.
    public var path: String?

    public init(
        id: Int64, podcastId: Int64, guid: String, title: String, published: Date? = nil,
        durationSeconds: Double? = nil, enclosureURL: String? = nil, enclosureLength: Int64? = nil,
        enclosureType: String? = nil, descriptionHTML: String? = nil, descriptionText: String? = nil,
        season: Int? = nil, episodeNumber: Int? = nil, episodeType: String? = nil, explicit: Bool? = nil,
        link: String? = nil, artworkURL: String? = nil, chaptersURL: String? = nil, transcriptURL: String? = nil,
        isNew: Bool = false, state: EpisodeState = .notDownloaded, transfer: Transfer? = nil, path: String? = nil
    ) {
        self.id = id
        self.podcastId = podcastId
        self.guid = guid
        self.title = title
        self.published = published
        self.durationSeconds = durationSeconds
        self.enclosureURL = enclosureURL
        self.enclosureLength = enclosureLength
        self.enclosureType = enclosureType
        self.descriptionHTML = descriptionHTML
        self.descriptionText = descriptionText
        self.season = season
        self.episodeNumber = episodeNumber
        self.episodeType = episodeType
        self.explicit = explicit
        self.link = link
        self.artworkURL = artworkURL
        self.chaptersURL = chaptersURL
        self.transcriptURL = transcriptURL
        self.isNew = isNew
        self.state = state
        self.transfer = transfer
        self.path = path
    }
}

/// A podcast with its episodes, newest first.
public struct PodcastDetail: Codable, Sendable, Hashable {
    public var podcast: Podcast
    public var episodes: [Episode]

    public init(podcast: Podcast, episodes: [Episode]) {
        self.podcast = podcast
        self.episodes = episodes
    }
}
