import FerryModel
import Foundation

/// A podcast (or any RSS/Atom feed) as Ferry keeps it, whichever format it came in.
///
/// Made by ``FeedParser``. Everything in it came from a stranger (DESIGN: "Every text that comes
/// from a feed ... is untrusted"), so texts are plain text, and HTML exists only sanitised by
/// ``HTMLSanitizer``. Fields the feed lacks are nil or empty: a missing field never fails a feed.
public struct Feed: Codable, Sendable, Hashable {
    /// The syntax the feed was written in.
    public enum Format: String, Codable, Sendable, Hashable {
        /// RSS 0.9x or 2.0: `<rss><channel><item>`.
        case rss
        /// RSS 1.0 or 0.90, an RDF document with items beside the channel.
        case rdf
        /// Atom 1.0 or 0.3.
        case atom
    }

    public var format: Format
    /// Plain text; may be empty.
    public var title: String
    /// `itunes:author`, else the Atom author, else `dc:creator`, else the iTunes owner's name.
    public var author: String?
    /// The description as plain text, with line breaks where the HTML had blocks.
    public var descriptionText: String
    /// The description as sanitised HTML, safe to put in a page.
    public var descriptionHTML: String
    /// `itunes:image`, else the RSS image, else the Atom logo or icon.
    public var artworkURL: URL?
    /// The show's web page.
    public var link: URL?
    /// `itunes:new-feed-url`: the publisher moved the feed there; subscriptions should follow.
    public var newFeedURL: URL?
    public var language: String?
    /// `itunes:explicit`; nil when the feed does not say.
    public var explicit: Bool?
    /// `itunes:owner`: who to contact about the show.
    public var ownerName: String?
    public var ownerEmail: String?
    /// `podcast:guid`: the show's identity across moves, if it declares one.
    public var podcastGUID: String?
    /// The rest of the Podcasting 2.0 namespace; nil when the feed uses none of it.
    public var podcasting: PodcastNamespace.Show?
    /// In document order (usually newest first).
    public var episodes: [FeedEpisode]

    public init(
        format: Format = .rss, title: String = "", author: String? = nil, descriptionText: String = "",
        descriptionHTML: String = "", artworkURL: URL? = nil, link: URL? = nil, newFeedURL: URL? = nil,
        language: String? = nil, explicit: Bool? = nil, ownerName: String? = nil, ownerEmail: String? = nil,
        podcastGUID: String? = nil, podcasting: PodcastNamespace.Show? = nil, episodes: [FeedEpisode] = []
    ) {
        self.format = format
        self.title = title
        self.author = author
        self.descriptionText = descriptionText
        self.descriptionHTML = descriptionHTML
        self.artworkURL = artworkURL
        self.link = link
        self.newFeedURL = newFeedURL
        self.language = language
        self.explicit = explicit
        self.ownerName = ownerName
        self.ownerEmail = ownerEmail
        self.podcastGUID = podcastGUID
        self.podcasting = podcasting
        self.episodes = episodes
    }
}
