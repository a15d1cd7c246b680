import FerryCore
import FerryFeeds
import FerryKit
import Foundation
import GRDB

/// A row of the `podcast` table: one subscription.
public struct PodcastRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "podcast"
    static let episodes = hasMany(EpisodeRecord.self)

    public var id: Int64?
    public var feedURL: String
    public var title: String
    public var author: String?
    public var descriptionText: String?
    public var descriptionHTML: String?
    public var artworkURL: String?
    public var link: String?
    /// `Podcasts/<title>`, fixed at subscription so a retitled feed keeps its folder.
    public var folder: String
    public var catalogId: Int64?
    /// Validators for the next conditional GET.
    public var etag: String?
    public var lastModified: String?
    public var refreshedAt: Date?
    public var errorCode: String?
    public var errorMessage: String?
    public var autoDownload: Int
    public var keepLatest: Int?
    /// The player's speed for this podcast (nil: the player's own).
    public var playbackSpeed: Double?
    /// Episodes listed oldest first (a serial).
    public var oldestFirst = false
    /// Minutes between fetches of this feed (nil: the daemon's interval).
    public var refreshMinutes: Int?
    public var createdAt: Date
    public var updatedAt: Date
    /// A private feed's HTTP Basic credentials: a secret, never shown or logged.
    public var username: String?
    public var password: String?

    public init(feedURL: String, title: String, folder: String, catalogId: Int64? = nil, now: Date = Date()) {
        self.feedURL = feedURL
        self.title = title
        self.folder = folder
        self.catalogId = catalogId
        self.autoDownload = 0
        self.createdAt = now
        self.updatedAt = now
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    public var podcastId: Int64 { id ?? 0 }

    /// The feed's credentials, if it is private.
    var credentials: FeedCredentials? {
        get { username.map { FeedCredentials(user: $0, password: password ?? "") } }
        set {
            username = newValue?.user
            password = newValue?.password
        }
    }

    public var error: TransferErrorInfo? {
        get { errorCode.map { TransferErrorInfo(code: $0, message: errorMessage ?? "") } }
        set {
            errorCode = newValue?.code
            errorMessage = newValue?.message
        }
    }

    /// Takes the channel-level fields of a freshly parsed feed.
    mutating func update(from feed: Feed) {
        if !feed.title.isEmpty { title = feed.title }
        author = feed.author ?? author
        descriptionText = feed.descriptionText.isEmpty ? descriptionText : feed.descriptionText
        descriptionHTML = feed.descriptionHTML.isEmpty ? descriptionHTML : feed.descriptionHTML
        artworkURL = feed.artworkURL?.absoluteString ?? artworkURL
        link = feed.link?.absoluteString ?? link
    }
}

/// A row of the `episode` table.
public struct EpisodeRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "episode"

    public var id: Int64?
    public var podcastId: Int64
    public var guid: String
    public var title: String
    public var published: Date?
    public var duration: Double?
    public var enclosureURL: String?
    public var enclosureLength: Int64?
    public var enclosureType: String?
    public var descriptionHTML: String?
    public var descriptionText: String?
    public var season: Int?
    public var episodeNumber: Int?
    public var episodeType: String?
    public var explicit: Bool?
    public var link: String?
    public var artworkURL: String?
    public var chaptersURL: String?
    public var transcriptURL: String?
    /// The transfer that downloads (or downloaded) it.
    public var transferId: Int64?
    /// A file found in the podcast's folder without a transfer (rebuilt from disk), relative to
    /// the library root.
    public var filePath: String?
    public var isNew: Bool
    public var firstSeenAt: Date

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    public var episodeId: Int64 { id ?? 0 }

    init(podcastId: Int64, episode: FeedEpisode, isNew: Bool, now: Date = Date()) {
        self.podcastId = podcastId
        self.guid = episode.guid
        self.title = episode.title
        self.isNew = isNew
        self.firstSeenAt = now
        update(from: episode)
    }

    /// Takes the fields of the feed's current version of this episode.
    mutating func update(from episode: FeedEpisode) {
        title = episode.title
        published = episode.published
        duration = episode.duration
        let enclosure = episode.primaryEnclosure
        enclosureURL = enclosure?.url
        enclosureLength = enclosure?.length
        enclosureType = enclosure?.type
        descriptionHTML = episode.descriptionHTML.isEmpty ? nil : episode.descriptionHTML
        descriptionText = episode.descriptionText.isEmpty ? nil : episode.descriptionText
        season = episode.season
        episodeNumber = episode.episodeNumber
        episodeType = episode.episodeType.rawValue
        explicit = episode.explicit
        link = episode.link
        artworkURL = episode.artworkURL
        chaptersURL = episode.chaptersURL
        transcriptURL = episode.transcripts.first?.url
    }

    /// The file name an episode gets: `2024-05-01 Title.mp3` (the extension from the enclosure's
    /// type or URL).
    /// The title to show: the feed's, else one made from the media file's name
    /// (`.../My_Show%20Ep12.mp3` → "My Show Ep12"), else "Episode N". (The file keeps its
    /// name from ``preferredFileName``, which finding files on disk again relies on.)
    var readableTitle: String {
        if !title.isEmpty { return title }
        if let url = enclosureURL.flatMap(URL.init(string:)), url.host != nil, url.path.count > 1 {
            let name = url.deletingPathExtension().lastPathComponent.replacingOccurrences(of: "_", with: " ")
            let words = name.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            if !words.isEmpty, words != "/" { return words }
        }
        return "Episode \(episodeId)"
    }

    var preferredFileName: String {
        var name = title.isEmpty ? "Episode \(episodeId)" : title
        if let published {
            let c = HTTPDate.utcCalendar.dateComponents([.year, .month, .day], from: published)
            name = String(format: "%04d-%02d-%02d ", c.year ?? 0, c.month ?? 0, c.day ?? 0) + name
        }
        let byType = enclosureType.flatMap(FileNamer.fileExtension(forContentType:))
        let byURL = enclosureURL.flatMap(URL.init(string:)).map(\.pathExtension).flatMap { ext in
            (1...5).contains(ext.count) && ext.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } ? ext.lowercased() : nil
        }
        // Slashes in titles ("AC/DC") must not look like folders to the sanitiser.
        let safe = name.replacingOccurrences(of: "/", with: "-").replacingOccurrences(of: "\\", with: "-")
        return (byType ?? byURL).map { "\(safe).\($0)" } ?? safe
    }
}
