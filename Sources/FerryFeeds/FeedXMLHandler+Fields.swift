import Foundation

/// Where a captured text goes. Each source has its own slot and the first non-blank value in a
/// slot wins (feeds repeat elements: three `<link>`s, two `<title>`s).
extension FeedXMLHandler {
    func assign(_ text: FeedText, to field: Field, of target: Target) {
        switch target {
        case .feed: assignToFeed(text, field)
        case .episode: assignToEpisode(text, field)
        }
    }

    private func assignToFeed(_ text: FeedText, _ field: Field) {
        switch field {
        case .title: Self.keep(&feed.title, text)
        case .dcTitle: Self.keep(&feed.dcTitle, text)
        case .link: feed.link = feed.link ?? text.url
        case .description: Self.keep(&feed.description, text)
        case .itunesSummary: Self.keep(&feed.itunesSummary, text)
        case .itunesSubtitle: Self.keep(&feed.itunesSubtitle, text)
        case .language: Self.keep(&feed.language, text.value)
        case .dcLanguage: Self.keep(&feed.dcLanguage, text.value)
        case .imageURL: feed.rssImage = feed.rssImage ?? text.url
        case .logo: feed.logo = feed.logo ?? text.url
        case .icon: feed.icon = feed.icon ?? text.url
        case .itunesAuthor: Self.keep(&feed.itunesAuthor, text)
        case .author: Self.keep(&feed.author, text)
        case .dcCreator: Self.keep(&feed.dcCreator, text)
        case .ownerName: Self.keep(&feed.ownerName, text)
        case .ownerEmail: Self.keep(&feed.ownerEmail, text.value)
        case .newFeedURL: feed.newFeedURL = feed.newFeedURL ?? text.url
        case .explicit: Self.keep(&feed.explicit, text.value)
        case .podcastGUID: Self.keep(&feed.podcastGUID, text.value)
        default: break
        }
    }

    private func assignToEpisode(_ text: FeedText, _ field: Field) {
        guard episode != nil else { return }
        switch field {
        case .title: Self.keep(&episode!.title, text)
        case .itunesTitle: Self.keep(&episode!.itunesTitle, text)
        case .dcTitle: Self.keep(&episode!.dcTitle, text)
        case .link:
            guard episode!.link == nil, let url = text.url?.absoluteString else { return }
            episode!.link = url
            episode!.writtenLink = FeedText.nonEmpty(text.value)
        case .guid: Self.keep(&episode!.guid, text.value)
        case .pubDate: Self.keep(&episode!.pubDate, text.value)
        case .dcDate: Self.keep(&episode!.dcDate, text.value)
        case .published: Self.keep(&episode!.published, text.value)
        case .updated: Self.keep(&episode!.updated, text.value)
        case .contentEncoded: Self.keep(&episode!.contentEncoded, text)
        case .content: Self.keep(&episode!.content, text)
        case .description: Self.keep(&episode!.description, text)
        case .summary: Self.keep(&episode!.summary, text)
        case .itunesSummary: Self.keep(&episode!.itunesSummary, text)
        case .itunesSubtitle: Self.keep(&episode!.itunesSubtitle, text)
        case .otherDescription: Self.keep(&episode!.otherDescription, text)
        case .author: Self.keep(&episode!.author, text)
        case .itunesAuthor: Self.keep(&episode!.itunesAuthor, text)
        case .dcCreator: Self.keep(&episode!.dcCreator, text)
        case .duration: Self.keep(&episode!.itunesDuration, text.value)
        case .explicit: Self.keep(&episode!.explicit, text.value)
        case .season: Self.keep(&episode!.season, text.value)
        case .episodeNumber: Self.keep(&episode!.episodeNumber, text.value)
        case .episodeType: Self.keep(&episode!.episodeType, text.value)
        default: break
        }
    }

    private static func keep(_ slot: inout FeedText?, _ text: FeedText) {
        if FeedText.nonBlank(slot) == nil, !text.isBlank { slot = text }
    }

    private static func keep(_ slot: inout String?, _ text: String) {
        if slot == nil, let trimmed = FeedText.nonEmpty(text) { slot = trimmed }
    }
}
