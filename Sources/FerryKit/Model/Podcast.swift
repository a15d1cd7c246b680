import Foundation

/// A podcast subscription.
public struct Podcast: Codable, Sendable, Hashable, Identifiable {
    /// The daemon's number for the subscription (`/v1/podcasts/{id}`, `ferry podcast`).
    public var id: Int64
    /// The feed's current URL (updated when the feed moves).
    public var feedURL: String
    /// The show's title, from the feed.
    public var title: String
    /// The show's author, from the feed.
    public var author: String?
    /// The description as plain text.
    public var descriptionText: String?
    /// The description as sanitised HTML (safe to insert into a page).
    public var descriptionHTML: String?
    /// The show's cover image.
    public var artworkURL: String?
    /// The show's website.
    public var link: String?
    /// The library folder episodes go to, relative to the library root (`Podcasts/Show`).
    public var folder: String
    /// Download the newest N episodes by themselves (0: never).
    public var autoDownload: Int
    /// Keep only the newest N downloaded episodes (nil: keep all).
    public var keepLatest: Int?
    /// Episodes known from the feed.
    public var episodeCount: Int
    /// Episodes that arrived since the last look and are not downloaded.
    public var newCount: Int
    /// Episodes whose file is in the library.
    public var downloadedCount: Int
    /// When the feed was last fetched, successfully or not (see ``error``).
    public var refreshedAt: Date?
    /// Why the last refresh failed, if it did.
    public var error: TransferErrorInfo?
    /// A private feed's user name (its password is never shown).
    public var user: String?
    /// The player's speed for this podcast, 0.5–3 (nil: the player's own).
    public var playbackSpeed: Double?
    /// Episodes are listed oldest first (a serial).
    public var oldestFirst: Bool?
    /// Minutes between fetches of its feed (nil: the daemon's interval, an hour by default).
    public var refreshMinutes: Int?

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(
        id: Int64, feedURL: String, title: String, author: String? = nil, descriptionText: String? = nil,
        descriptionHTML: String? = nil, artworkURL: String? = nil, link: String? = nil, folder: String,
        autoDownload: Int = 0, keepLatest: Int? = nil, episodeCount: Int = 0, newCount: Int = 0,
        downloadedCount: Int = 0, refreshedAt: Date? = nil, error: TransferErrorInfo? = nil, user: String? = nil,
        playbackSpeed: Double? = nil, oldestFirst: Bool? = nil, refreshMinutes: Int? = nil
    ) {
        self.playbackSpeed = playbackSpeed
        self.oldestFirst = oldestFirst
        self.refreshMinutes = refreshMinutes
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
        self.user = user
    }
}

/// Where an episode stands, derived from its transfer and the file on disk.
public enum EpisodeState: String, Codable, Sendable, CaseIterable {
    /// Not in the library and not being downloaded.
    case notDownloaded
    /// Queued, running or waiting to retry; see the episode's `transfer` for progress.
    case downloading
    /// Its download is paused.
    case paused
    /// Its download failed; the episode's `transfer` says why.
    case failed
    /// The file is in the library, at the episode's `path`.
    case downloaded
}

/// An episode of a podcast.
public struct Episode: Codable, Sendable, Hashable, Identifiable {
    /// The daemon's number for the episode (`/v1/episodes/{id}/download`).
    public var id: Int64
    /// The ``Podcast/id`` of its show.
    public var podcastId: Int64
    /// The feed's `guid` (or a stand-in made from the enclosure URL): what identifies the episode
    /// from one refresh to the next.
    public var guid: String
    /// The episode's title.
    public var title: String
    /// The publication date, when the feed gives a readable one.
    public var published: Date?
    /// The running time in seconds, when the feed gives it.
    public var durationSeconds: Double?
    /// The media file (the feed's enclosure); nil for an episode without one, which cannot be
    /// downloaded.
    public var enclosureURL: String?
    /// The media file's size in bytes, as the feed states it (often wrong).
    public var enclosureLength: Int64?
    /// The media file's MIME type, as the feed states it (`audio/mpeg`).
    public var enclosureType: String?
    /// Sanitised HTML, safe to insert into a page.
    public var descriptionHTML: String?
    /// The description as plain text.
    public var descriptionText: String?
    /// The season number (`itunes:season`).
    public var season: Int?
    /// The episode number within its season (`itunes:episode`).
    public var episodeNumber: Int?
    /// `full`, `trailer` or `bonus`.
    public var episodeType: String?
    /// Whether the feed marks it explicit.
    public var explicit: Bool?
    /// The episode's web page.
    public var link: String?
    /// The episode's own image, when it has one.
    public var artworkURL: String?
    /// A Podcasting 2.0 chapters file (`podcast:chapters`).
    public var chaptersURL: String?
    /// A Podcasting 2.0 transcript (`podcast:transcript`).
    public var transcriptURL: String?
    /// It arrived in a refresh since the podcast was last marked seen.
    public var isNew: Bool
    /// Where its download stands.
    public var state: EpisodeState
    /// The transfer downloading (or that downloaded) it.
    public var transfer: Transfer?
    /// Absolute path of the downloaded file.
    public var path: String?
    /// Where the listener is in it; nil: never started.
    public var playback: Playback?

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(
        id: Int64, podcastId: Int64, guid: String, title: String, published: Date? = nil,
        durationSeconds: Double? = nil, enclosureURL: String? = nil, enclosureLength: Int64? = nil,
        enclosureType: String? = nil, descriptionHTML: String? = nil, descriptionText: String? = nil,
        season: Int? = nil, episodeNumber: Int? = nil, episodeType: String? = nil, explicit: Bool? = nil,
        link: String? = nil, artworkURL: String? = nil, chaptersURL: String? = nil, transcriptURL: String? = nil,
        isNew: Bool = false, state: EpisodeState = .notDownloaded, transfer: Transfer? = nil, path: String? = nil,
        playback: Playback? = nil
    ) {
        self.playback = playback
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
    /// The subscription.
    public var podcast: Podcast
    /// Its episodes, newest first.
    public var episodes: [Episode]

    /// A podcast with its episodes (newest first).
    public init(podcast: Podcast, episodes: [Episode]) {
        self.podcast = podcast
        self.episodes = episodes
    }
}
