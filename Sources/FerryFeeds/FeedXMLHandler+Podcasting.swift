import FerryModel
import Foundation

/// The Podcasting 2.0 namespace's elements beyond guid, chapters and transcripts (see
/// ``PodcastNamespace``): what each means, read from its text and attributes. A value that is
/// not what the spec says (a person without a name, a soundbite without a start, a URL that is
/// not http(s)) is left out; lists stop at ``PodcastNamespace/most``.
extension FeedXMLHandler {
    func assignPodcasting(_ text: FeedText, _ capture: Capture) {
        let attributes = capture.attributes
        let value = FeedText.nonEmpty(text.line)
        func web(_ name: String) -> String? { Self.webURL(attributes[name], base: capture.base) }
        switch (capture.field, capture.target) {
        case (.person, _):
            guard let name = value else { return }
            let person = PodcastNamespace.Person(
                name: Self.clip(name), role: FeedText.nonEmpty(attributes["role"])?.lowercased().prefix(40).description,
                group: FeedText.nonEmpty(attributes["group"])?.lowercased().prefix(40).description, imageURL: web("img"), link: web("href"))
            if capture.target == .feed {
                Self.append(person, to: &feed.podcasting.persons, most: PodcastNamespace.most.persons)
            } else {
                Self.append(person, to: &episode!.podcasting.persons, most: PodcastNamespace.most.persons)
            }
        case (.funding, _):
            guard let url = web("url") else { return }
            let funding = PodcastNamespace.Funding(url: url, text: value.map(Self.clip))
            if capture.target == .feed {
                Self.append(funding, to: &feed.podcasting.funding, most: PodcastNamespace.most.funding)
            } else {
                Self.append(funding, to: &episode!.podcasting.funding, most: PodcastNamespace.most.funding)
            }
        case (.license, _):
            guard let name = value else { return }
            let license = PodcastNamespace.License(name: Self.clip(name), url: web("url"))
            if capture.target == .feed { feed.podcasting.license = feed.podcasting.license ?? license }
            else if episode!.podcasting.license == nil { episode!.podcasting.license = license }
        case (.txt, _):
            guard let text = value else { return }
            let txt = PodcastNamespace.Text(text: String(text.prefix(4000)), purpose: FeedText.nonEmpty(attributes["purpose"]).map(Self.clip))
            if capture.target == .feed {
                Self.append(txt, to: &feed.podcasting.txt, most: PodcastNamespace.most.txt)
            } else {
                Self.append(txt, to: &episode!.podcasting.txt, most: PodcastNamespace.most.txt)
            }
        case (.locked, .feed):
            feed.podcasting.locked = feed.podcasting.locked ?? FeedText.flag(value)
            feed.podcasting.lockedOwner = feed.podcasting.lockedOwner ?? FeedText.nonEmpty(attributes["owner"] ?? attributes["email"]).map(Self.clip)
        case (.medium, .feed):
            feed.podcasting.medium = feed.podcasting.medium ?? value.map { Self.clip($0.lowercased()) }
        case (.updateFrequency, .feed):
            guard feed.podcasting.updateFrequency == nil else { return }
            let rule = FeedText.nonEmpty(attributes["rrule"]).map { String($0.prefix(500)) }
            let frequency = PodcastNamespace.UpdateFrequency(
                text: value.map(Self.clip), rrule: rule, complete: FeedText.flag(attributes["complete"]) ?? false,
                start: attributes["dtstart"].flatMap(RFC822Date.parse))
            if frequency != PodcastNamespace.UpdateFrequency() { feed.podcasting.updateFrequency = frequency }
        case (.trailer, .feed):
            guard let title = value, let url = web("url") else { return }
            let trailer = PodcastNamespace.Trailer(
                title: Self.clip(title), url: url, published: attributes["pubdate"].flatMap(RFC822Date.parse),
                length: attributes["length"].flatMap { Int64(FeedText.trim($0)) }, type: FeedText.nonEmpty(attributes["type"]),
                season: FeedText.count(attributes["season"]))
            Self.append(trailer, to: &feed.podcasting.trailers, most: PodcastNamespace.most.trailers)
        case (.podcastSeason, .episode):
            guard episode!.podcasting.season == nil, let number = FeedText.count(value) else { return }
            episode!.podcasting.season = number
            episode!.podcasting.seasonName = FeedText.nonEmpty(attributes["name"]).map(Self.clip)
        case (.podcastEpisode, .episode):
            guard episode!.podcasting.episode == nil, let number = value.flatMap(Double.init), number.isFinite, number >= 0 else { return }
            episode!.podcasting.episode = number
            episode!.podcasting.episodeDisplay = FeedText.nonEmpty(attributes["display"]).map(Self.clip)
        case (.soundbite, .episode):
            guard let start = attributes["startTime"].flatMap({ Double(FeedText.trim($0)) }), start.isFinite, start >= 0,
                let duration = attributes["duration"].flatMap({ Double(FeedText.trim($0)) }), duration.isFinite, duration > 0
            else { return }
            Self.append(
                PodcastNamespace.Soundbite(start: start, duration: duration, title: value.map(Self.clip)),
                to: &episode!.podcasting.soundbites, most: PodcastNamespace.most.soundbites)
        default:
            break
        }
    }

    /// `podcast:remoteItem` in a podroll: a feed's guid, maybe its URL.
    func addRemoteItem(_ attributes: [String: String], base: URL?) {
        guard let guid = FeedText.nonEmpty(attributes["feedGuid"]) else { return }
        let item = PodcastNamespace.RemoteItem(
            feedGUID: Self.clip(guid), feedURL: Self.webURL(attributes["feedUrl"], base: base),
            itemGUID: FeedText.nonEmpty(attributes["itemGuid"]).map(Self.clip), medium: FeedText.nonEmpty(attributes["medium"])?.lowercased())
        Self.append(item, to: &feed.podcasting.podroll, most: PodcastNamespace.most.podroll)
    }

    /// `podcast:alternateEnclosure` opens: kept (its children fill it) when it has a type.
    func startAlternate(_ attributes: [String: String]) -> Context {
        guard episode != nil, let type = FeedText.nonEmpty(attributes["type"]),
            episode!.podcasting.alternateEnclosures.count < PodcastNamespace.most.alternates
        else { return .skip }
        episode!.podcasting.alternateEnclosures.append(
            PodcastNamespace.AlternateEnclosure(
                type: Self.clip(type.lowercased()), length: attributes["length"].flatMap { Int64(FeedText.trim($0)) }.flatMap { $0 >= 0 ? $0 : nil },
                bitrate: attributes["bitrate"].flatMap { Double(FeedText.trim($0)) }.flatMap { $0.isFinite && $0 > 0 ? $0 : nil },
                height: FeedText.count(attributes["height"]), language: FeedText.nonEmpty(attributes["lang"]).map(Self.clip),
                title: FeedText.nonEmpty(attributes["title"]).map(Self.clip), rel: FeedText.nonEmpty(attributes["rel"]).map(Self.clip),
                codecs: FeedText.nonEmpty(attributes["codecs"]).map(Self.clip), isDefault: FeedText.flag(attributes["default"]) ?? false))
        return .alternateEnclosure
    }

    /// A `podcast:source` or `podcast:integrity` of the alternate enclosure being read.
    func alternateChild(_ name: String, attributes: [String: String], base: URL?) {
        guard let last = episode?.podcasting.alternateEnclosures.indices.last else { return }
        switch name {
        case "source":
            guard let written = FeedText.nonEmpty(attributes["uri"]), written.utf8.count <= 4096,
                episode!.podcasting.alternateEnclosures[last].sources.count < PodcastNamespace.most.sources
            else { return }
            // Web URLs resolve like any other; ipfs://, magnet: and the like stay as written.
            let uri = Self.webURL(written, base: base) ?? (written.contains(":") && !written.contains(where: \.isWhitespace) ? written : nil)
            guard let uri else { return }
            episode!.podcasting.alternateEnclosures[last].sources.append(
                .init(uri: uri, contentType: FeedText.nonEmpty(attributes["contentType"]).map(Self.clip)))
        case "integrity":
            guard episode!.podcasting.alternateEnclosures[last].integrity == nil, let type = FeedText.nonEmpty(attributes["type"]),
                let value = FeedText.nonEmpty(attributes["value"]), value.utf8.count <= 8192
            else { return }
            episode!.podcasting.alternateEnclosures[last].integrity = .init(type: type.lowercased(), value: value)
        default:
            break
        }
    }

    /// An http(s) URL resolved against `base`; nil for anything else.
    static func webURL(_ text: String?, base: URL?) -> String? {
        guard let text, let url = FeedText.url(text, base: base), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.absoluteString.utf8.count <= 4096
        else { return nil }
        return url.absoluteString
    }

    static func clip(_ text: String) -> String { String(text.prefix(500)) }

    static func append<Value>(_ value: Value, to list: inout [Value], most: Int) {
        if list.count < most { list.append(value) }
    }
}

extension FeedText {
    /// `yes`/`true` or `no`/`false`, as the namespace writes flags; nil for anything else.
    static func flag(_ text: String?) -> Bool? {
        switch text.map({ trim($0).lowercased() }) {
        case "yes", "true": true
        case "no", "false": false
        default: nil
        }
    }
}
