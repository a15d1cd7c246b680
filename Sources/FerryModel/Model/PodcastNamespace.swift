import Foundation

/// What a feed says in the Podcasting 2.0 namespace (`podcast:`, podcastindex.org) beyond its
/// guid, chapters and transcripts, read by FerryFeeds. Every text is plain and one line, every
/// URL absolute and http(s); lists are capped so a hostile feed cannot make them large.
public enum PodcastNamespace {
    /// `podcast:person`: who made or appears in the show or episode.
    public struct Person: Codable, Sendable, Hashable {
        public var name: String
        /// `host`, `guest`, `producer`, … (the spec's taxonomy, lower-case); nil means host.
        public var role: String?
        public var group: String?
        public var imageURL: String?
        public var link: String?

        public init(name: String, role: String? = nil, group: String? = nil, imageURL: String? = nil, link: String? = nil) {
            self.name = name
            self.role = role
            self.group = group
            self.imageURL = imageURL
            self.link = link
        }
    }

    /// `podcast:funding`: where listeners can support the show.
    public struct Funding: Codable, Sendable, Hashable {
        public var url: String
        public var text: String?

        public init(url: String, text: String? = nil) {
            self.url = url
            self.text = text
        }
    }

    /// `podcast:license`: a license name (SPDX or the publisher's) and where it is written.
    public struct License: Codable, Sendable, Hashable {
        public var name: String
        public var url: String?

        public init(name: String, url: String? = nil) {
            self.name = name
            self.url = url
        }
    }

    /// `podcast:txt`: free text for a purpose (`verify` proves ownership to a platform).
    public struct Text: Codable, Sendable, Hashable {
        public var text: String
        public var purpose: String?

        public init(text: String, purpose: String? = nil) {
            self.text = text
            self.purpose = purpose
        }
    }

    /// `podcast:soundbite`: a clip of the episode worth hearing on its own.
    public struct Soundbite: Codable, Sendable, Hashable {
        public var start: Double
        public var duration: Double
        public var title: String?

        public init(start: Double, duration: Double, title: String? = nil) {
            self.start = start
            self.duration = duration
            self.title = title
        }
    }

    /// `podcast:integrity`: a Subresource Integrity value (`sha384-BASE64 …`) or a PGP signature.
    public struct Integrity: Codable, Sendable, Hashable {
        /// `sri` or `pgp-signature`.
        public var type: String
        public var value: String

        public init(type: String, value: String) {
            self.type = type
            self.value = value
        }

        /// The SRI's digests as (algorithm, lower-case hex), strongest first; empty for a PGP
        /// signature or an SRI with no valid sha256/sha384/sha512 value.
        public var digests: [(algorithm: String, hex: String)] {
            guard type.lowercased() == "sri" else { return [] }
            let sizes = ["sha512": 64, "sha384": 48, "sha256": 32]
            let found: [(String, String)] = value.split(whereSeparator: \.isWhitespace).compactMap { token in
                // An SRI value may carry `?options` after the base64.
                let part = token.split(separator: "?", maxSplits: 1)[0]
                guard let dash = part.firstIndex(of: "-") else { return nil }
                let algorithm = part[..<dash].lowercased()
                guard let size = sizes[algorithm], let data = Data(base64Encoded: String(part[part.index(after: dash)...])), data.count == size
                else { return nil }
                return (algorithm, data.hexText)
            }
            return found.sorted { (sizes[$0.0] ?? 0) > (sizes[$1.0] ?? 0) }
        }
    }

    /// `podcast:alternateEnclosure`: the episode again, in another format or bitrate, from its
    /// sources (mirrors), maybe with the file's integrity.
    public struct AlternateEnclosure: Codable, Sendable, Hashable {
        public var type: String
        public var length: Int64?
        /// Bits per second.
        public var bitrate: Double?
        /// Video height in pixels.
        public var height: Int?
        public var language: String?
        public var title: String?
        public var rel: String?
        public var codecs: String?
        /// `default="true"`: the same file as the item's `enclosure`.
        public var isDefault: Bool
        /// `podcast:source` URIs (http, https, ipfs, magnet, …) with their content type.
        public var sources: [Source]
        public var integrity: Integrity?

        public init(
            type: String, length: Int64? = nil, bitrate: Double? = nil, height: Int? = nil, language: String? = nil, title: String? = nil,
            rel: String? = nil, codecs: String? = nil, isDefault: Bool = false, sources: [Source] = [], integrity: Integrity? = nil
        ) {
            self.type = type
            self.length = length
            self.bitrate = bitrate
            self.height = height
            self.language = language
            self.title = title
            self.rel = rel
            self.codecs = codecs
            self.isDefault = isDefault
            self.sources = sources
            self.integrity = integrity
        }

        public struct Source: Codable, Sendable, Hashable {
            public var uri: String
            public var contentType: String?

            public init(uri: String, contentType: String? = nil) {
                self.uri = uri
                self.contentType = contentType
            }

            /// An http(s) URL: what Ferry can download from today.
            public var isWeb: Bool {
                let lower = uri.lowercased()
                return lower.hasPrefix("https://") || lower.hasPrefix("http://")
            }
        }
    }

    /// `podcast:remoteItem`: another feed (or one of its items) the publisher points to.
    public struct RemoteItem: Codable, Sendable, Hashable {
        public var feedGUID: String
        public var feedURL: String?
        public var itemGUID: String?
        public var medium: String?

        public init(feedGUID: String, feedURL: String? = nil, itemGUID: String? = nil, medium: String? = nil) {
            self.feedGUID = feedGUID
            self.feedURL = feedURL
            self.itemGUID = itemGUID
            self.medium = medium
        }
    }

    /// `podcast:trailer` (channel level): a trailer of the show or of a season.
    public struct Trailer: Codable, Sendable, Hashable {
        public var title: String
        public var url: String
        public var published: Date?
        public var length: Int64?
        public var type: String?
        public var season: Int?

        public init(title: String, url: String, published: Date? = nil, length: Int64? = nil, type: String? = nil, season: Int? = nil) {
            self.title = title
            self.url = url
            self.published = published
            self.length = length
            self.type = type
            self.season = season
        }
    }

    /// `podcast:updateFrequency`: how often the publisher means to publish.
    public struct UpdateFrequency: Codable, Sendable, Hashable {
        /// The publisher's words ("Weekly on Tuesday").
        public var text: String?
        /// An RFC 5545 RRULE (`FREQ=WEEKLY;BYDAY=TU`), unchecked here.
        public var rrule: String?
        /// True: the show will publish no more.
        public var complete: Bool
        public var start: Date?

        public init(text: String? = nil, rrule: String? = nil, complete: Bool = false, start: Date? = nil) {
            self.text = text
            self.rrule = rrule
            self.complete = complete
            self.start = start
        }
    }

    /// The show's fields (channel level).
    public struct Show: Codable, Sendable, Hashable {
        /// `podcast:guid`: the show's GUID, which stays when its feed moves.
        public var guid: String?
        public var persons: [Person]
        public var funding: [Funding]
        /// `podcast:locked`: true means the publisher forbids importing the feed elsewhere.
        public var locked: Bool?
        public var lockedOwner: String?
        /// `podcast`, `music`, `video`, `audiobook`, `publisher`, … (lower-case).
        public var medium: String?
        public var license: License?
        public var updateFrequency: UpdateFrequency?
        /// `podcast:podping usesPodping="true"`: the publisher announces new episodes by Podping.
        public var usesPodping: Bool?
        /// `podcast:podroll`: shows the publisher recommends (a publisher feed's channel-level
        /// `remoteItem`s, its own shows, too).
        public var podroll: [RemoteItem]
        public var trailers: [Trailer]
        public var txt: [Text]

        public init(
            persons: [Person] = [], funding: [Funding] = [], locked: Bool? = nil, lockedOwner: String? = nil, medium: String? = nil,
            license: License? = nil, updateFrequency: UpdateFrequency? = nil, usesPodping: Bool? = nil, podroll: [RemoteItem] = [],
            trailers: [Trailer] = [], txt: [Text] = [], guid: String? = nil
        ) {
            self.guid = guid
            self.persons = persons
            self.funding = funding
            self.locked = locked
            self.lockedOwner = lockedOwner
            self.medium = medium
            self.license = license
            self.updateFrequency = updateFrequency
            self.usesPodping = usesPodping
            self.podroll = podroll
            self.trailers = trailers
            self.txt = txt
        }

        public var isEmpty: Bool { self == Show() }
    }

    /// An episode's fields (item level).
    public struct Episode: Codable, Sendable, Hashable {
        public var persons: [Person]
        public var alternateEnclosures: [AlternateEnclosure]
        /// `podcast:season`'s number and name ("Egypt").
        public var season: Int?
        public var seasonName: String?
        /// `podcast:episode`'s number (may be fractional) and how to show it ("Ch.3").
        public var episode: Double?
        public var episodeDisplay: String?
        public var soundbites: [Soundbite]
        public var license: License?
        public var txt: [Text]
        public var funding: [Funding]

        public init(
            persons: [Person] = [], alternateEnclosures: [AlternateEnclosure] = [], season: Int? = nil, seasonName: String? = nil,
            episode: Double? = nil, episodeDisplay: String? = nil, soundbites: [Soundbite] = [], license: License? = nil, txt: [Text] = [],
            funding: [Funding] = []
        ) {
            self.persons = persons
            self.alternateEnclosures = alternateEnclosures
            self.season = season
            self.seasonName = seasonName
            self.episode = episode
            self.episodeDisplay = episodeDisplay
            self.soundbites = soundbites
            self.license = license
            self.txt = txt
            self.funding = funding
        }

        public var isEmpty: Bool { self == Episode() }
    }

    /// The most of each list kept from one feed element.
    public static let most = (persons: 50, funding: 10, alternates: 20, sources: 10, soundbites: 20, podroll: 200, trailers: 20, txt: 10)
}

/// Which of an episode's files a podcast's downloads take when its feed offers several
/// (`podcast:alternateEnclosure`): the household's choice for the podcast, since the file is shared.
public enum EnclosureChoice: String, Codable, Sendable, Hashable, CaseIterable {
    /// The item's `enclosure`, as the feed publishes it.
    case feed
    /// The smallest audio file (lowest bitrate, else length): for a phone's data plan, or a video show heard only.
    case smallestAudio = "smallest-audio"
    /// The best of the enclosure's kind (audio or video): the highest video, else bitrate, else length.
    case highestQuality = "highest-quality"
}
