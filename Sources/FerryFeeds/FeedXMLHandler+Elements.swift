import Foundation

/// Which element means what. RSS elements have no namespace (RSS 2.0) or the RSS 1.0/0.90 one;
/// Atom elements the Atom 1.0 or 0.3 one. Extensions are matched by namespace in any format.
extension FeedXMLHandler {
    /// Recognises the root element: `rss`, `rdf:RDF` or `feed`. `rss` and `feed` count in any
    /// namespace (feeds declare odd default namespaces), which then counts as the format's own.
    func startRoot(_ name: String, namespace: FeedNamespace, attributes: [String: String]) -> Bool {
        switch (name, namespace) {
        case ("rss", _), ("channel", .none), ("channel", .rss):
            feed.format = .rss
        case ("RDF", .rdf):
            feed.format = .rdf
        case ("feed", _):
            feed.format = .atom
            isAtom03 = namespace == .atom03 || attributes["version"].map(FeedText.trim) == "0.3"
        default:
            return false
        }
        rootNamespace = namespace
        isFeed = true
        feed.rootLanguage = attributes["xml:lang"]
        return true
    }

    /// A child element of a frame in `context` begins: reads its attributes, maybe begins a
    /// capture, and returns the context its own children will have.
    func start(
        _ name: String, namespace: FeedNamespace, attributes: [String: String], in context: Context, base: URL?
    ) -> Context {
        let isAtom = feed.format == .atom
        let isCore =
            namespace == rootNamespace
            || (isAtom ? namespace == .atom10 || namespace == .atom03 || namespace == .none
                : namespace == .none || namespace == .rss)
        switch context {
        case .feed:
            if isCore { return startFeedCore(name, isAtom: isAtom, attributes: attributes, base: base) }
            return startFeedExtension(name, namespace: namespace, attributes: attributes, base: base)
        case .episode:
            if isCore { return startEpisodeCore(name, isAtom: isAtom, attributes: attributes, base: base) }
            return startEpisodeExtension(name, namespace: namespace, attributes: attributes, base: base)
        case .image:
            if isCore, name == "url" { beginCapture(.imageURL, .feed, attributes: attributes, base: base) }
        case .owner:
            guard namespace == .itunes else { break }
            if name == "name" { beginCapture(.ownerName, .feed, attributes: attributes, base: base) }
            if name == "email" { beginCapture(.ownerEmail, .feed, attributes: attributes, base: base) }
        case .feedAuthor, .episodeAuthor:
            if isCore, name == "name" {
                beginCapture(.author, context == .feedAuthor ? .feed : .episode, attributes: attributes, base: base)
            }
        case .podroll:
            if namespace == .podcast, name == "remoteItem" { addRemoteItem(attributes, base: base) }
        case .alternateEnclosure:
            if namespace == .podcast { alternateChild(name, attributes: attributes, base: base) }
        case .skip:
            break
        }
        return .skip
    }

    private func startFeedCore(_ name: String, isAtom: Bool, attributes: [String: String], base: URL?) -> Context {
        let capture = { (field: Field) in
            self.beginCapture(field, .feed, attributes: attributes, base: base, atomText: isAtom)
        }
        switch (name, isAtom) {
        case ("channel", false): return .feed
        case ("item", false), ("entry", true): return startEpisode()
        case ("title", _): capture(.title)
        case ("description", false), ("subtitle", true), ("tagline", true): capture(.description)
        case ("link", false): startRSSLink(attributes, target: .feed, base: base)
        case ("link", true): atomLink(attributes, target: .feed, base: base)
        case ("language", false): beginCapture(.language, .feed, attributes: attributes, base: base)
        case ("image", false): return .image
        case ("author", true): return .feedAuthor
        case ("logo", true): beginCapture(.logo, .feed, attributes: attributes, base: base)
        case ("icon", true): beginCapture(.icon, .feed, attributes: attributes, base: base)
        default: break
        }
        return .skip
    }

    private func startFeedExtension(
        _ name: String, namespace: FeedNamespace, attributes: [String: String], base: URL?
    ) -> Context {
        let capture = { (field: Field) in self.beginCapture(field, .feed, attributes: attributes, base: base) }
        switch (namespace, name) {
        case (.itunes, "author"): capture(.itunesAuthor)
        case (.itunes, "summary"): capture(.itunesSummary)
        case (.itunes, "subtitle"): capture(.itunesSubtitle)
        case (.itunes, "explicit"): capture(.explicit)
        case (.itunes, "new-feed-url"): capture(.newFeedURL)
        case (.itunes, "image"): feed.itunesImage = feed.itunesImage ?? href(attributes["href"], base)
        case (.itunes, "owner"): return .owner
        case (.dublinCore, "creator"): capture(.dcCreator)
        case (.dublinCore, "language"): capture(.dcLanguage)
        case (.dublinCore, "title"): capture(.dcTitle)
        case (.podcast, "guid"): capture(.podcastGUID)
        case (.podcast, "person"): capture(.person)
        case (.podcast, "funding"): capture(.funding)
        case (.podcast, "locked"): capture(.locked)
        case (.podcast, "medium"): capture(.medium)
        case (.podcast, "license"): capture(.license)
        case (.podcast, "updateFrequency"): capture(.updateFrequency)
        case (.podcast, "txt"): capture(.txt)
        case (.podcast, "trailer"): capture(.trailer)
        case (.podcast, "podping"): feed.podcasting.usesPodping = FeedText.flag(attributes["usesPodping"]) ?? feed.podcasting.usesPodping
        case (.podcast, "podroll"): return .podroll
        // A publisher feed lists its shows as the channel's own remoteItems: offered the same way.
        case (.podcast, "remoteItem"): addRemoteItem(attributes, base: base)
        case (.media, "thumbnail"): feed.mediaThumbnail = feed.mediaThumbnail ?? href(attributes["url"], base)
        default: break
        }
        return .skip
    }

    private func startEpisode() -> Context {
        guard episodes.count < maximumEpisodes else { return .skip }
        episode = EpisodeBuilder()
        return .episode
    }

    private func startEpisodeCore(_ name: String, isAtom: Bool, attributes: [String: String], base: URL?) -> Context {
        let capture = { (field: Field) in
            self.beginCapture(field, .episode, attributes: attributes, base: base, atomText: isAtom)
        }
        switch (name, isAtom) {
        case ("title", _): capture(.title)
        case ("description", false): capture(.description)
        case ("summary", true): capture(.summary)
        case ("content", true): capture(.content)
        case ("link", false): startRSSLink(attributes, target: .episode, base: base)
        case ("link", true): atomLink(attributes, target: .episode, base: base)
        case ("guid", false), ("id", true): beginCapture(.guid, .episode, attributes: attributes, base: base)
        case ("pubDate", false): beginCapture(.pubDate, .episode, attributes: attributes, base: base)
        case ("published", true), ("issued", true), ("created", true):
            beginCapture(.published, .episode, attributes: attributes, base: base)
        case ("updated", true), ("modified", true): beginCapture(.updated, .episode, attributes: attributes, base: base)
        case ("author", false): beginCapture(.author, .episode, attributes: attributes, base: base)
        case ("author", true): return .episodeAuthor
        case ("enclosure", false):
            addEnclosure(attributes["url"], length: attributes["length"], type: attributes["type"], base: base)
        default: break
        }
        return .skip
    }

    private func startEpisodeExtension(
        _ name: String, namespace: FeedNamespace, attributes: [String: String], base: URL?
    ) -> Context {
        let capture = { (field: Field) in self.beginCapture(field, .episode, attributes: attributes, base: base) }
        switch (namespace, name) {
        case (.itunes, "title"): capture(.itunesTitle)
        case (.itunes, "author"): capture(.itunesAuthor)
        case (.itunes, "summary"): capture(.itunesSummary)
        case (.itunes, "subtitle"): capture(.itunesSubtitle)
        case (.itunes, "duration"): capture(.duration)
        case (.itunes, "explicit"): capture(.explicit)
        case (.itunes, "season"): capture(.season)
        case (.itunes, "episode"): capture(.episodeNumber)
        case (.itunes, "episodeType"): capture(.episodeType)
        case (.itunes, "image"):
            if episode?.itunesImage == nil { episode?.itunesImage = hrefText(attributes["href"], base) }
        case (.content, "encoded"): capture(.contentEncoded)
        case (.dublinCore, "creator"): capture(.dcCreator)
        case (.dublinCore, "date"): capture(.dcDate)
        case (.dublinCore, "title"): capture(.dcTitle)
        case (.dublinCore, "description"), (.media, "description"): capture(.otherDescription)
        case (.media, "group"): return .episode
        case (.media, "content"): addMediaContent(attributes, base: base)
        case (.media, "thumbnail"):
            if episode?.mediaThumbnail == nil { episode?.mediaThumbnail = hrefText(attributes["url"], base) }
        case (.podcast, "chapters"):
            if episode?.chaptersURL == nil { episode?.chaptersURL = hrefText(attributes["url"], base) }
        case (.podcast, "person"): capture(.person)
        case (.podcast, "funding"): capture(.funding)
        case (.podcast, "license"): capture(.license)
        case (.podcast, "txt"): capture(.txt)
        case (.podcast, "season"): capture(.podcastSeason)
        case (.podcast, "episode"): capture(.podcastEpisode)
        case (.podcast, "soundbite"): capture(.soundbite)
        case (.podcast, "alternateEnclosure"): return startAlternate(attributes)
        case (.podcast, "transcript"):
            if let url = hrefText(attributes["url"], base) {
                episode?.transcripts.append(
                    FeedEpisode.Transcript(
                        url: url, type: FeedText.nonEmpty(attributes["type"]),
                        language: FeedText.nonEmpty(attributes["language"])))
            }
        default: break
        }
        return .skip
    }

    // MARK: - Links and enclosures

    private func href(_ text: String?, _ base: URL?) -> URL? {
        text.flatMap { FeedText.url($0, base: base) }
    }

    /// An episode's URL attribute: episodes keep their URLs as text (see ``FeedEpisode``).
    private func hrefText(_ text: String?, _ base: URL?) -> String? {
        href(text, base)?.absoluteString
    }

    /// An RSS `link`: its text, or (in some RDF feeds) an `href`.
    private func startRSSLink(_ attributes: [String: String], target: Target, base: URL?) {
        if let href = FeedText.nonEmpty(attributes["href"]) {
            assign(FeedText(href, base: base), to: .link, of: target)
        } else {
            beginCapture(.link, target, attributes: attributes, base: base)
        }
    }

    /// An Atom `link`: `alternate` (the default) is the web page, `enclosure` the media.
    private func atomLink(_ attributes: [String: String], target: Target, base: URL?) {
        let rel = attributes["rel"].map { FeedText.trim($0).lowercased() } ?? "alternate"
        switch (rel, target) {
        case ("alternate", _):
            guard let href = FeedText.nonEmpty(attributes["href"]) else { return }
            assign(FeedText(href, base: base), to: .link, of: target)
        case ("enclosure", .episode):
            addEnclosure(attributes["href"], length: attributes["length"], type: attributes["type"], base: base)
        default:
            break
        }
    }

    private func addEnclosure(_ written: String?, length: String?, type: String?, base: URL?) {
        guard let written = FeedText.nonEmpty(written), let url = hrefText(written, base) else { return }
        if episode?.writtenEnclosure == nil { episode?.writtenEnclosure = written }
        episode?.enclosures.append(
            FeedEpisode.Enclosure(
                url: url, length: length.flatMap { Int64(FeedText.trim($0)) }.flatMap { $0 >= 0 ? $0 : nil },
                type: FeedText.nonEmpty(type)))
    }

    /// `media:content` of audio or video, kept for items without an enclosure.
    private func addMediaContent(_ attributes: [String: String], base: URL?) {
        let type = FeedText.nonEmpty(attributes["type"])
        let medium = attributes["medium"]?.lowercased()
        let enclosure = hrefText(attributes["url"], base).map {
            FeedEpisode.Enclosure(url: $0, length: attributes["fileSize"].flatMap { Int64($0) }, type: type)
        }
        guard let enclosure, enclosure.isMedia || medium == "audio" || medium == "video" else { return }
        if episode?.writtenMediaContent == nil { episode?.writtenMediaContent = FeedText.nonEmpty(attributes["url"]) }
        episode?.mediaContents.append(enclosure)
        if episode?.mediaDuration == nil { episode?.mediaDuration = attributes["duration"] }
    }
}
