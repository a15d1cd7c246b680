import Crypto
import FerryModel
import Foundation

/// What the parser has seen of one item so far, every source kept apart, so that the choice
/// between them (`content:encoded` over `description`, `pubDate` over `dc:date`) is made once,
/// in ``build()``, whatever order the feed wrote them in. Within one source, the first wins.
struct EpisodeBuilder {
    var title: FeedText?
    var itunesTitle: FeedText?
    var dcTitle: FeedText?
    var guid: String?
    var link: String?
    /// The link as written, for a substitute guid.
    var writtenLink: String?
    var pubDate: String?
    var dcDate: String?
    var published: String?
    var updated: String?
    var contentEncoded: FeedText?
    var content: FeedText?
    var description: FeedText?
    var summary: FeedText?
    var itunesSummary: FeedText?
    var itunesSubtitle: FeedText?
    var otherDescription: FeedText?
    var author: FeedText?
    var itunesAuthor: FeedText?
    var dcCreator: FeedText?
    var enclosures: [FeedEpisode.Enclosure] = []
    /// The first enclosure's URL as written, for a substitute guid.
    var writtenEnclosure: String?
    /// Audio and video `media:content`, used when there is no enclosure.
    var mediaContents: [FeedEpisode.Enclosure] = []
    var writtenMediaContent: String?
    var mediaDuration: String?
    var itunesDuration: String?
    var explicit: String?
    var season: String?
    var episodeNumber: String?
    var episodeType: String?
    var itunesImage: String?
    var mediaThumbnail: String?
    var chaptersURL: String?
    var transcripts: [FeedEpisode.Transcript] = []
    var podcasting = PodcastNamespace.Episode()

    func build() -> FeedEpisode {
        let title = [title, itunesTitle, dcTitle].lazy.compactMap(FeedText.nonBlank).first?.line ?? ""
        let date = [pubDate, dcDate, published, updated].lazy.compactMap { $0.flatMap(RFC822Date.parse) }.first
        let notes = [contentEncoded, content, description, summary, itunesSummary, itunesSubtitle, otherDescription]
            .lazy.compactMap(FeedText.nonBlank).first
        let rendering = notes?.rendering
        let duration = itunesDuration.flatMap(EpisodeDuration.parse) ?? mediaDuration.flatMap(EpisodeDuration.parse)
        return FeedEpisode(
            guid: FeedText.nonEmpty(guid)
                ?? Self.substituteGUID(
                    enclosure: enclosures.isEmpty ? writtenMediaContent : writtenEnclosure, link: writtenLink,
                    title: title, published: date),
            title: title,
            published: date,
            duration: duration,
            enclosures: enclosures.isEmpty ? mediaContents : enclosures,
            descriptionHTML: rendering?.html ?? "",
            descriptionText: rendering?.text ?? "",
            season: FeedText.count(season) ?? podcasting.season,
            episodeNumber: FeedText.count(episodeNumber) ?? podcasting.episode.flatMap { $0 == $0.rounded() ? Int(exactly: $0) : nil },
            episodeType: episodeType.flatMap {
                FeedEpisode.EpisodeType(rawValue: FeedText.trim($0).lowercased())
            } ?? .full,
            explicit: FeedText.explicitFlag(explicit),
            link: link,
            artworkURL: itunesImage ?? mediaThumbnail,
            chaptersURL: chaptersURL,
            transcripts: transcripts,
            author: [itunesAuthor, author, dcCreator].lazy.compactMap(FeedText.nonBlank).first?.line,
            podcasting: podcasting.isEmpty ? nil : podcasting
        )
    }

    /// A guid for an item without one, stable across refreshes: `ferry-sha256:` and the SHA-256
    /// of the enclosure URL as written, else of the link as written, else of the title and the
    /// publication time. Hashed so that it has one shape and cannot be mistaken for, or collide
    /// with, a publisher's guid; from written URLs so that it survives the feed moving.
    static func substituteGUID(enclosure: String?, link: String?, title: String, published: Date?) -> String {
        let basis: String
        if let enclosure {
            basis = "enclosure\n" + enclosure
        } else if let link {
            basis = "link\n" + link
        } else {
            basis = "title\n" + title + "\n" + (published.map { String(Int64($0.timeIntervalSince1970)) } ?? "")
        }
        let hex = SHA256.hash(data: Data(basis.utf8)).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }
        return "ferry-sha256:" + hex.joined()
    }
}

extension FeedText {
    /// The text unless it is missing or only whitespace.
    static func nonBlank(_ text: FeedText?) -> FeedText? {
        guard let text, !text.isBlank else { return nil }
        return text
    }
}
