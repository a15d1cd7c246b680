import FerryModel
import Foundation

/// What the parser has seen of the channel (RSS) or feed (Atom), every source kept apart until
/// ``build(episodes:)`` chooses, like ``EpisodeBuilder``.
struct FeedBuilder {
    var format: Feed.Format = .rss
    var title: FeedText?
    var dcTitle: FeedText?
    var link: URL?
    var description: FeedText?
    var itunesSummary: FeedText?
    var itunesSubtitle: FeedText?
    var language: String?
    var dcLanguage: String?
    /// `xml:lang` on the root element.
    var rootLanguage: String?
    var itunesImage: URL?
    var rssImage: URL?
    var logo: URL?
    var icon: URL?
    var mediaThumbnail: URL?
    var itunesAuthor: FeedText?
    var author: FeedText?
    var dcCreator: FeedText?
    var ownerName: FeedText?
    var ownerEmail: String?
    var newFeedURL: URL?
    var explicit: String?
    var podcastGUID: String?
    var podcasting = PodcastNamespace.Show()

    /// Whether anything was read: what a broken document must have to be kept.
    var hasContent: Bool {
        build(episodes: []) != Feed(format: format)
    }

    func build(episodes: [FeedEpisode]) -> Feed {
        let notes = [description, itunesSummary, itunesSubtitle].lazy.compactMap(FeedText.nonBlank).first
        let rendering = notes?.rendering
        let ownerName = FeedText.nonBlank(ownerName)?.line
        return Feed(
            format: format,
            title: (FeedText.nonBlank(title) ?? FeedText.nonBlank(dcTitle))?.line ?? "",
            author: [itunesAuthor, author, dcCreator].lazy.compactMap(FeedText.nonBlank).first?.line ?? ownerName,
            descriptionText: rendering?.text ?? "",
            descriptionHTML: rendering?.html ?? "",
            artworkURL: itunesImage ?? rssImage ?? logo ?? icon ?? mediaThumbnail,
            link: link,
            newFeedURL: newFeedURL,
            language: FeedText.nonEmpty(language) ?? FeedText.nonEmpty(dcLanguage) ?? FeedText.nonEmpty(rootLanguage),
            explicit: FeedText.explicitFlag(explicit),
            ownerName: ownerName,
            ownerEmail: FeedText.nonEmpty(ownerEmail),
            podcastGUID: FeedText.nonEmpty(podcastGUID),
            podcasting: showFields(),
            episodes: episodes
        )
    }

    /// The show's Podcasting 2.0 fields, its GUID among them, kept with the podcast.
    private func showFields() -> PodcastNamespace.Show? {
        var show = podcasting
        show.guid = FeedText.nonEmpty(podcastGUID)?.trimmingCharacters(in: .whitespacesAndNewlines)
        return show.isEmpty ? nil : show
    }
}
