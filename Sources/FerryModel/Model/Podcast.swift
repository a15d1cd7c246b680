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
    /// Which file its downloads take when an episode offers several (nil: the feed's enclosure).
    public var enclosureChoice: EnclosureChoice?
    /// The show's Podcasting 2.0 fields: persons, funding, medium (music, video), license,
    /// `locked`, how often it publishes, the shows it recommends, trailers.
    public var podcasting: PodcastNamespace.Show?

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(
        id: Int64, feedURL: String, title: String, author: String? = nil, descriptionText: String? = nil,
        descriptionHTML: String? = nil, artworkURL: String? = nil, link: String? = nil, folder: String,
        autoDownload: Int = 0, keepLatest: Int? = nil, episodeCount: Int = 0, newCount: Int = 0,
        downloadedCount: Int = 0, refreshedAt: Date? = nil, error: TransferErrorInfo? = nil, user: String? = nil,
        playbackSpeed: Double? = nil, oldestFirst: Bool? = nil, refreshMinutes: Int? = nil, enclosureChoice: EnclosureChoice? = nil,
        podcasting: PodcastNamespace.Show? = nil
    ) {
        self.enclosureChoice = enclosureChoice
        self.podcasting = podcasting
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

/// An episode of a podcast: what its feed says (``fields``, read as the episode's own:
/// `episode.title`) and where the listener stands with it.
@dynamicMemberLookup
public struct Episode: Codable, Sendable, Hashable, Identifiable {
    /// The daemon's number for the episode (`/v1/episodes/{id}/download`).
    public var id: Int64
    /// The ``Podcast/id`` of its show.
    public var podcastId: Int64
    /// What the feed says of it: guid, title, dates, the media file, show notes, numbering.
    public var fields: EpisodeFields
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

    /// The feed's fields as the episode's own: `episode.title`, `episode.enclosureURL`.
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<EpisodeFields, Value>) -> Value {
        get { fields[keyPath: keyPath] }
        set { fields[keyPath: keyPath] = newValue }
    }

    /// The running time in seconds, when the feed gives it.
    public var durationSeconds: Double? {
        get { fields.duration }
        set { fields.duration = newValue }
    }

    /// Makes one from the feed's fields and the episode's standing.
    public init(
        id: Int64, podcastId: Int64, fields: EpisodeFields, isNew: Bool = false, state: EpisodeState = .notDownloaded,
        transfer: Transfer? = nil, path: String? = nil, playback: Playback? = nil
    ) {
        self.id = id
        self.podcastId = podcastId
        self.fields = fields
        self.isNew = isNew
        self.state = state
        self.transfer = transfer
        self.path = path
        self.playback = playback
    }

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
        let fields = EpisodeFields(
            guid: guid, title: title, published: published, duration: durationSeconds, enclosureURL: enclosureURL,
            enclosureLength: enclosureLength, enclosureType: enclosureType, descriptionHTML: descriptionHTML,
            descriptionText: descriptionText, season: season, episodeNumber: episodeNumber, episodeType: episodeType,
            explicit: explicit, link: link, artworkURL: artworkURL, chaptersURL: chaptersURL, transcriptURL: transcriptURL
        )
        self.init(id: id, podcastId: podcastId, fields: fields, isNew: isNew, state: state, transfer: transfer, path: path, playback: playback)
    }

    // One flat JSON object, as the API has always served it: the fields beside the episode's own.
    public init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: EpisodeFields.Key.self)
        typealias Key = EpisodeFields.Key
        id = try object.decode(Int64.self, forKey: Key("id"))
        podcastId = try object.decode(Int64.self, forKey: Key("podcastId"))
        fields = try EpisodeFields(from: object, durationKey: "durationSeconds")
        isNew = try object.decode(Bool.self, forKey: Key("isNew"))
        state = try object.decode(EpisodeState.self, forKey: Key("state"))
        transfer = try object.decodeIfPresent(Transfer.self, forKey: Key("transfer"))
        path = try object.decodeIfPresent(String.self, forKey: Key("path"))
        playback = try object.decodeIfPresent(Playback.self, forKey: Key("playback"))
    }

    public func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: EpisodeFields.Key.self)
        typealias Key = EpisodeFields.Key
        try object.encode(id, forKey: Key("id"))
        try object.encode(podcastId, forKey: Key("podcastId"))
        try fields.encode(to: &object, durationKey: "durationSeconds")
        try object.encode(isNew, forKey: Key("isNew"))
        try object.encode(state, forKey: Key("state"))
        try object.encodeIfPresent(transfer, forKey: Key("transfer"))
        try object.encodeIfPresent(path, forKey: Key("path"))
        try object.encodeIfPresent(playback, forKey: Key("playback"))
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
