import FerryCore
import FerryFeeds
import FerryKit
import Foundation
import GRDB

/// A row of the `podcast` table: a podcast of the household's library (each listener's
/// subscription to it is a ``Subscription``).
package struct PodcastRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    package static let databaseTableName = "podcast"
    static let episodes = hasMany(EpisodeRecord.self)

    package var id: Int64?
    package var feedURL: String
    package var title: String
    package var author: String?
    package var descriptionText: String?
    package var descriptionHTML: String?
    package var artworkURL: String?
    package var link: String?
    /// `Podcasts/<title>`, fixed at subscription so a retitled feed keeps its folder.
    package var folder: String
    package var catalogId: Int64?
    /// Validators for the next conditional GET.
    package var etag: String?
    package var lastModified: String?
    package var refreshedAt: Date?
    package var errorCode: String?
    package var errorMessage: String?
    /// The union of its subscribers' wishes (``Subscription/union(of:)``), kept by the store.
    package var autoDownload: Int
    package var keepLatest: Int?
    /// Minutes between fetches of this feed (nil: the daemon's interval).
    package var refreshMinutes: Int?
    /// Which file downloads take when an episode offers several (nil: the feed's enclosure).
    package var enclosureChoice: EnclosureChoice?
    package var createdAt: Date
    package var updatedAt: Date
    /// A private feed's HTTP Basic credentials: a secret, never shown or logged.
    package var username: String?
    package var password: String?
    /// The show's Podcasting 2.0 fields (persons, funding, medium, update frequency, podroll, …).
    package var podcasting: PodcastNamespace.Show?

    package init(feedURL: String, title: String, folder: String, catalogId: Int64? = nil, now: Date = Date()) {
        self.feedURL = feedURL
        self.title = title
        self.folder = folder
        self.catalogId = catalogId
        self.autoDownload = 0
        self.createdAt = now
        self.updatedAt = now
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    package var podcastId: Int64 { id ?? 0 }

    /// The feed's credentials, if it is private.
    var credentials: FeedCredentials? {
        get { username.map { FeedCredentials(user: $0, password: password ?? "") } }
        set {
            username = newValue?.user
            password = newValue?.password
        }
    }

    package var error: TransferErrorInfo? {
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
        podcasting = feed.podcasting
    }
}

/// A row of the `episode` table: the feed's fields (``EpisodeFields``, read as the record's own:
/// `record.title`) and what Ferry knows of the episode besides.
@dynamicMemberLookup
package struct EpisodeRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    package static let databaseTableName = "episode"

    package var id: Int64?
    package var podcastId: Int64
    package var fields: EpisodeFields
    /// The transfer that downloads (or downloaded) it.
    package var transferId: Int64?
    /// A file found in the podcast's folder without a transfer (rebuilt from disk), relative to
    /// the library root.
    package var filePath: String?
    package var isNew: Bool
    package var firstSeenAt: Date
    /// When a fetched feed first no longer listed it (nil while it does): an episode gone this
    /// long that nobody downloaded, played or queued is forgotten (``ListeningStore/forgetGoneEpisodes(podcastId:goneBefore:)``).
    package var goneSince: Date?

    package subscript<Value>(dynamicMember keyPath: WritableKeyPath<EpisodeFields, Value>) -> Value {
        get { fields[keyPath: keyPath] }
        set { fields[keyPath: keyPath] = newValue }
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    package var episodeId: Int64 { id ?? 0 }

    init(podcastId: Int64, episode: FeedEpisode, isNew: Bool, now: Date = Date()) {
        self.podcastId = podcastId
        self.fields = episode.fields
        self.isNew = isNew
        self.firstSeenAt = now
    }

    /// Takes the fields of the feed's current version of this episode (its identity stays).
    mutating func update(from episode: FeedEpisode) {
        let guid = fields.guid
        fields = episode.fields
        fields.guid = guid
        goneSince = nil
    }

    // One flat row (and one flat JSON object in PostgreSQL): the fields' columns beside the record's own.
    package init(from decoder: any Decoder) throws {
        let row = try decoder.container(keyedBy: EpisodeFields.Key.self)
        typealias Key = EpisodeFields.Key
        id = try row.decodeIfPresent(Int64.self, forKey: Key("id"))
        podcastId = try row.decode(Int64.self, forKey: Key("podcastId"))
        fields = try EpisodeFields(from: row)
        transferId = try row.decodeIfPresent(Int64.self, forKey: Key("transferId"))
        filePath = try row.decodeIfPresent(String.self, forKey: Key("filePath"))
        isNew = try row.decode(Bool.self, forKey: Key("isNew"))
        firstSeenAt = try row.decode(Date.self, forKey: Key("firstSeenAt"))
        goneSince = try row.decodeIfPresent(Date.self, forKey: Key("goneSince"))
    }

    package func encode(to encoder: any Encoder) throws {
        var row = encoder.container(keyedBy: EpisodeFields.Key.self)
        typealias Key = EpisodeFields.Key
        try row.encodeIfPresent(id, forKey: Key("id"))
        try row.encode(podcastId, forKey: Key("podcastId"))
        try fields.encode(to: &row)
        try row.encodeIfPresent(transferId, forKey: Key("transferId"))
        try row.encodeIfPresent(filePath, forKey: Key("filePath"))
        try row.encode(isNew, forKey: Key("isNew"))
        try row.encode(firstSeenAt, forKey: Key("firstSeenAt"))
        try row.encodeIfPresent(goneSince, forKey: Key("goneSince"))
    }

    /// The title to show: the feed's, else one made from the media file's name
    /// (`.../My_Show%20Ep12.mp3` → "My Show Ep12"), else "Episode N". (The file keeps its
    /// name from ``preferredFileName(_:)``, which finding files on disk again relies on.)
    var readableTitle: String {
        if !fields.title.isEmpty { return fields.title }
        if let url = fields.enclosureURL.flatMap(URL.init(string:)), url.host != nil, url.path.count > 1 {
            let name = url.deletingPathExtension().lastPathComponent.replacingOccurrences(of: "_", with: " ")
            let words = name.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            if !words.isEmpty, words != "/" { return words }
        }
        return "Episode \(episodeId)"
    }

    /// The file name an episode gets: `2024-05-01 Title.mp3` (the extension from the type of the
    /// file downloaded, else its URL: the enclosure, or the alternate its podcast chose).
    func preferredFileName(_ sources: EpisodeSources) -> String {
        var name = fields.title.isEmpty ? "Episode \(episodeId)" : fields.title
        if let published = fields.published {
            let c = HTTPDate.utcCalendar.dateComponents([.year, .month, .day], from: published)
            name = String(format: "%04d-%02d-%02d ", c.year ?? 0, c.month ?? 0, c.day ?? 0) + name
        }
        let byType = sources.type.flatMap(FileNamer.fileExtension(forContentType:))
        let byURL = URL(string: sources.url).map(\.pathExtension).flatMap { ext in
            (1...5).contains(ext.count) && ext.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } ? ext.lowercased() : nil
        }
        // Slashes in titles ("AC/DC") must not look like folders to the sanitiser.
        let safe = name.replacingOccurrences(of: "/", with: "-").replacingOccurrences(of: "\\", with: "-")
        return (byType ?? byURL).map { "\(safe).\($0)" } ?? safe
    }
}
