import Foundation

/// What a feed says of one episode, as Ferry keeps and serves it: declared once, here, for the
/// episode's row (`EpisodeRecord`, in SQLite and PostgreSQL) and its wire model (``Episode``).
/// The parser's view of an item (`FeedEpisode`: every enclosure and transcript) becomes this with
/// its primary enclosure and first transcript.
public struct EpisodeFields: Sendable, Hashable {
    /// The feed's `guid` (or a stand-in made from the enclosure URL): what identifies the episode
    /// from one refresh to the next.
    public var guid: String
    /// The episode's title, as the feed gives it (may be empty).
    public var title: String
    /// The publication date, when the feed gives a readable one.
    public var published: Date?
    /// The running time in seconds, when the feed gives it.
    public var duration: Double?
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
    /// The rest of the Podcasting 2.0 namespace (persons, alternate enclosures, soundbites, …).
    public var podcasting: PodcastNamespace.Episode?

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(
        guid: String, title: String = "", published: Date? = nil, duration: Double? = nil, enclosureURL: String? = nil,
        enclosureLength: Int64? = nil, enclosureType: String? = nil, descriptionHTML: String? = nil, descriptionText: String? = nil,
        season: Int? = nil, episodeNumber: Int? = nil, episodeType: String? = nil, explicit: Bool? = nil, link: String? = nil,
        artworkURL: String? = nil, chaptersURL: String? = nil, transcriptURL: String? = nil, podcasting: PodcastNamespace.Episode? = nil
    ) {
        self.guid = guid
        self.title = title
        self.published = published
        self.duration = duration
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
        self.podcasting = podcasting
    }

    // MARK: - Coding, flat among the holder's own keys

    /// A key of a holder's flat coding: these fields' and the holder's own.
    public struct Key: CodingKey, Hashable, Sendable {
        public let stringValue: String
        public init(_ name: String) { stringValue = name }
        public init?(stringValue: String) { self.init(stringValue) }
        public var intValue: Int? { nil }
        public init?(intValue: Int) { nil }
    }

    /// Decodes the fields from a holder's container; the running time's key is the holder's
    /// (`duration` in a row, `durationSeconds` on the wire).
    public init(from container: KeyedDecodingContainer<Key>, durationKey: String = "duration") throws {
        func value<T: Decodable>(_ name: String) throws -> T? { try container.decodeIfPresent(T.self, forKey: Key(name)) }
        guid = try container.decode(String.self, forKey: Key("guid"))
        title = try container.decode(String.self, forKey: Key("title"))
        published = try value("published")
        duration = try value(durationKey)
        enclosureURL = try value("enclosureURL")
        enclosureLength = try value("enclosureLength")
        enclosureType = try value("enclosureType")
        descriptionHTML = try value("descriptionHTML")
        descriptionText = try value("descriptionText")
        season = try value("season")
        episodeNumber = try value("episodeNumber")
        episodeType = try value("episodeType")
        explicit = try value("explicit")
        link = try value("link")
        artworkURL = try value("artworkURL")
        chaptersURL = try value("chaptersURL")
        transcriptURL = try value("transcriptURL")
        podcasting = try value("podcasting")
    }

    /// Encodes the fields into a holder's container, nil ones left out as synthesized coding does.
    public func encode(to container: inout KeyedEncodingContainer<Key>, durationKey: String = "duration") throws {
        func put<T: Encodable>(_ value: T?, _ name: String) throws { try container.encodeIfPresent(value, forKey: Key(name)) }
        try container.encode(guid, forKey: Key("guid"))
        try container.encode(title, forKey: Key("title"))
        try put(published, "published")
        try put(duration, durationKey)
        try put(enclosureURL, "enclosureURL")
        try put(enclosureLength, "enclosureLength")
        try put(enclosureType, "enclosureType")
        try put(descriptionHTML, "descriptionHTML")
        try put(descriptionText, "descriptionText")
        try put(season, "season")
        try put(episodeNumber, "episodeNumber")
        try put(episodeType, "episodeType")
        try put(explicit, "explicit")
        try put(link, "link")
        try put(artworkURL, "artworkURL")
        try put(chaptersURL, "chaptersURL")
        try put(transcriptURL, "transcriptURL")
        try put(podcasting, "podcasting")
    }
}
