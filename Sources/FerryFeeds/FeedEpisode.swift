import FerryModel
import Foundation

/// One item of a feed: an RSS `<item>` or an Atom `<entry>`.
///
/// Its URLs are absolute, resolved and checked while parsing, and kept as text: a Foundation
/// `URL` costs about 280 bytes more on Linux (16 MiB of a 20,000-episode feed's three per
/// episode, heaptrack), and everything downstream stores text anyway.
public struct FeedEpisode: Codable, Sendable, Hashable {
    /// The feed's `guid` (Atom `id`), verbatim apart from surrounding whitespace. When the item has
    /// none, a stable substitute: `ferry-sha256:` and the hex SHA-256 of the enclosure URL as the
    /// feed wrote it, else of the link, else of the title and publication time (see
    /// ``EpisodeBuilder``). Written URLs, not resolved ones, so the identity survives a feed move.
    public var guid: String
    /// Plain text; may be empty.
    public var title: String
    public var published: Date?
    /// Seconds, from `itunes:duration` (else `media:content duration`).
    public var duration: Double?
    /// Every enclosure, URLs resolved against `xml:base` and the feed's URL. Several are allowed
    /// (Atom `rel="enclosure"` links, or alternative formats).
    public var enclosures: [Enclosure]
    /// Show notes as sanitised HTML: `content:encoded`, else `description` / Atom content,
    /// else the summary.
    public var descriptionHTML: String
    /// The same show notes as plain text.
    public var descriptionText: String
    public var season: Int?
    public var episodeNumber: Int?
    public var episodeType: EpisodeType
    /// `itunes:explicit`; nil when the item does not say (the show's setting then applies).
    public var explicit: Bool?
    /// The episode's web page.
    public var link: String?
    /// `itunes:image`, else `media:thumbnail`.
    public var artworkURL: String?
    /// `podcast:chapters`: a JSON chapters file.
    public var chaptersURL: String?
    /// `podcast:transcript` elements, in document order.
    public var transcripts: [Transcript]
    /// `itunes:author`, else the RSS `author`, Atom author or `dc:creator`.
    public var author: String?
    /// The rest of the Podcasting 2.0 namespace; nil when the item uses none of it.
    public var podcasting: PodcastNamespace.Episode?

    public init(
        guid: String, title: String = "", published: Date? = nil, duration: Double? = nil,
        enclosures: [Enclosure] = [], descriptionHTML: String = "", descriptionText: String = "",
        season: Int? = nil, episodeNumber: Int? = nil, episodeType: EpisodeType = .full, explicit: Bool? = nil,
        link: String? = nil, artworkURL: String? = nil, chaptersURL: String? = nil, transcripts: [Transcript] = [],
        author: String? = nil, podcasting: PodcastNamespace.Episode? = nil
    ) {
        self.guid = guid
        self.title = title
        self.published = published
        self.duration = duration
        self.enclosures = enclosures
        self.descriptionHTML = descriptionHTML
        self.descriptionText = descriptionText
        self.season = season
        self.episodeNumber = episodeNumber
        self.episodeType = episodeType
        self.explicit = explicit
        self.link = link
        self.artworkURL = artworkURL
        self.chaptersURL = chaptersURL
        self.transcripts = transcripts
        self.author = author
        self.podcasting = podcasting
    }

    /// The episode as Ferry keeps and serves it: its primary enclosure, its first transcript,
    /// empty show notes as none.
    public var fields: EpisodeFields {
        let enclosure = primaryEnclosure
        return EpisodeFields(
            guid: guid, title: title, published: published, duration: duration, enclosureURL: enclosure?.url,
            enclosureLength: enclosure?.length, enclosureType: enclosure?.type,
            descriptionHTML: descriptionHTML.isEmpty ? nil : descriptionHTML, descriptionText: descriptionText.isEmpty ? nil : descriptionText,
            season: season, episodeNumber: episodeNumber, episodeType: episodeType.rawValue, explicit: explicit, link: link,
            artworkURL: artworkURL, chaptersURL: chaptersURL, transcriptURL: preferredTranscript?.url, podcasting: podcasting
        )
    }

    /// The transcript to show and search: one with times (JSON, WebVTT, SRT) before HTML or
    /// plain text, else the first.
    public var preferredTranscript: Transcript? {
        let timed = ["application/json", "text/vtt", "application/x-subrip", "application/srt", "text/srt"]
        return transcripts.first { timed.contains($0.type?.lowercased() ?? "") } ?? transcripts.first
    }

    /// What to download: the first audio or video enclosure, else the first of any type.
    public var primaryEnclosure: Enclosure? {
        enclosures.first(where: \.isMedia) ?? enclosures.first
    }

    /// `itunes:episodeType`; anything else the feed says counts as `full`, the iTunes default.
    public enum EpisodeType: String, Codable, Sendable, Hashable {
        case full, trailer, bonus
    }

    /// An RSS `<enclosure>`, Atom `rel="enclosure"` link or (when there are neither) `media:content`.
    public struct Enclosure: Codable, Sendable, Hashable {
        public var url: String
        /// Bytes, as the feed claims; often 0 or wrong, so only a hint.
        public var length: Int64?
        /// The MIME type, as the feed claims.
        public var type: String?

        public init(url: String, length: Int64? = nil, type: String? = nil) {
            self.url = url
            self.length = length
            self.type = type
        }

        /// Whether the type says audio or video.
        public var isMedia: Bool {
            guard let type = type?.lowercased() else { return false }
            return type.hasPrefix("audio/") || type.hasPrefix("video/")
        }
    }

    /// A `podcast:transcript`.
    public struct Transcript: Codable, Sendable, Hashable {
        public var url: String
        /// `text/vtt`, `application/x-subrip`, `application/json`, `text/html`, ...
        public var type: String?
        public var language: String?

        public init(url: String, type: String? = nil, language: String? = nil) {
            self.url = url
            self.type = type
            self.language = language
        }
    }
}
