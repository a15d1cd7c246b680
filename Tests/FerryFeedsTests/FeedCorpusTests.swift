import Foundation
import Testing

@testable import FerryFeeds

/// Every fixture of the gofeed corpus parses, and agrees with gofeed's own parse wherever the two
/// models hold the same thing: feed title, language, link, author and description; item count;
/// each item's title, guid, link, author, enclosure URLs, iTunes fields, date and description.
///
/// Texts are compared in plain-text form (``FeedFixtures/textForm(_:)``), since Ferry keeps plain
/// text and sanitised HTML where gofeed keeps what the feed wrote.
@Suite struct FeedCorpusTests {
    /// Where Ferry differs from gofeed by design, keyed by fixture and field.
    struct Exception {
        /// What Ferry gives instead.
        let ferry: String
        let reason: String
    }

    static let exceptions: [String: [String: Exception]] = [
        "gofeed-atom/entry_id_xml_base": [
            "item 0 guid": Exception(
                ferry: "relative/link",
                reason: "Ferry keeps a guid as written: an episode's identity must not change with the xml:base "
                    + "it happens to be read under. gofeed resolves Atom ids against xml:base.")
        ]
    ]

    @Test func theCorpusIsThere() {
        #expect(FeedFixtures.all.count == 434)
        #expect(FeedFixtures.all.filter { $0.hasPrefix("gofeed-rss/") }.count == 164)
    }

    @Test(arguments: FeedFixtures.all)
    func agreesWithGofeed(_ fixture: String) throws {
        let feed = try FeedFixtures.parse(fixture)
        let gofeed = try FeedFixtures.gofeed(fixture)
        var comparison = Comparison(fixture: fixture)
        if fixture.hasPrefix("gofeed-atom/") {
            comparison.atom(feed, gofeed)
        } else {
            comparison.rss(feed, gofeed)
        }
    }

    /// One fixture's comparisons, each an `#expect` naming the fixture and the field.
    struct Comparison {
        let fixture: String

        func check<Value: Equatable>(_ field: String, _ ferry: Value, _ gofeed: Value) {
            if let exception = FeedCorpusTests.exceptions[fixture]?[field] {
                #expect("\(ferry)" == exception.ferry, "\(fixture) \(field): \(exception.reason)")
                #expect(ferry != gofeed, "\(fixture) \(field) is listed as an exception but agrees with gofeed")
            } else {
                #expect(ferry == gofeed, "\(fixture) \(field)")
            }
        }

        func text(_ value: Any?) -> String {
            FeedFixtures.textForm(value as? String ?? "")
        }

        mutating func rss(_ feed: Feed, _ json: [String: Any]) {
            let items = json["items"] as? [[String: Any]] ?? []
            common(feed, json, items: items)
            let links = json["links"] as? [String] ?? []
            check("link", links.isEmpty || links.contains(feed.link?.absoluteString ?? "-"), true)
            if links.isEmpty { check("link", feed.link, nil) }
            if let description = json["description"] as? String {
                check("description", FeedFixtures.oneLine(feed.descriptionText), text(description))
            }
            for (index, (episode, item)) in zip(feed.episodes, items).enumerated() {
                let at = "item \(index) "
                let guid = (item["guid"] as? [String: Any])?["value"] as? String
                checkGUID(at, episode, guid)
                let enclosures = (item["enclosures"] as? [[String: Any]] ?? []).compactMap { $0["url"] as? String }
                check(at + "enclosures", episode.enclosures.map(\.url), enclosures)
                let itemLinks = item["links"] as? [String] ?? []
                check(at + "link", itemLinks.isEmpty || itemLinks.contains(episode.link ?? "-"), true)
                if itemLinks.isEmpty { check(at + "link", episode.link, nil) }
                if let author = item["author"] as? String { check(at + "author", episode.author, text(author)) }
                check(at + "published", episode.published, (item["pubDateParsed"] as? String).flatMap(FeedFixtures.gofeedDate))
                if let notes = item["content"] as? String ?? item["description"] as? String {
                    check(at + "description", FeedFixtures.oneLine(episode.descriptionText), text(notes))
                }
            }
        }

        mutating func atom(_ feed: Feed, _ json: [String: Any]) {
            let entries = json["entries"] as? [[String: Any]] ?? []
            common(feed, json, items: entries)
            check("link", feed.link?.absoluteString, alternate(json["links"]))
            if let subtitle = json["subtitle"] as? String {
                check("description", FeedFixtures.oneLine(feed.descriptionText), text(subtitle))
            }
            if let name = (json["authors"] as? [[String: Any]])?.first?["name"] as? String {
                check("author", feed.author, text(name))
            }
            for (index, (episode, entry)) in zip(feed.episodes, entries).enumerated() {
                let at = "item \(index) "
                checkGUID(at, episode, entry["id"] as? String)
                let links = entry["links"] as? [[String: Any]] ?? []
                let enclosures = links.filter { $0["rel"] as? String == "enclosure" }.compactMap { $0["href"] as? String }
                check(at + "enclosures", episode.enclosures.map(\.url), enclosures)
                check(at + "link", episode.link, alternate(entry["links"]))
                if let name = (entry["authors"] as? [[String: Any]])?.first?["name"] as? String {
                    check(at + "author", episode.author, text(name))
                }
                // Ferry falls back on `updated` when an entry has no `published`.
                let date = (entry["publishedParsed"] ?? entry["updatedParsed"]) as? String
                check(at + "published", episode.published, date.flatMap(FeedFixtures.gofeedDate))
                let content = (entry["content"] as? [String: Any])?["value"] as? String
                if let notes = content ?? entry["summary"] as? String {
                    check(at + "description", FeedFixtures.oneLine(episode.descriptionText), text(notes))
                }
            }
        }

        /// What both formats share: title, language, item count and titles, iTunes fields.
        private func common(_ feed: Feed, _ json: [String: Any], items: [[String: Any]]) {
            check("title", feed.title, text(json["title"]))
            check("item count", feed.episodes.count, items.count)
            if let language = json["language"] as? String { check("language", feed.language, language) }
            if let author = (json["itunesExt"] as? [String: Any])?["author"] as? String {
                check("itunes author", feed.author, text(author))
            }
            for (index, (episode, item)) in zip(feed.episodes, items).enumerated() {
                let at = "item \(index) "
                check(at + "title", episode.title, text(item["title"]))
                guard let itunes = item["itunesExt"] as? [String: Any] else { continue }
                if let author = itunes["author"] as? String { check(at + "itunes author", episode.author, text(author)) }
                if let duration = itunes["duration"] as? String {
                    check(at + "duration", episode.duration, EpisodeDuration.parse(duration))
                }
                if let explicit = itunes["explicit"] as? String {
                    check(at + "explicit", episode.explicit, ["yes": true, "true": true, "no": false, "false": false, "clean": false][explicit])
                }
            }
        }

        /// A guid gofeed has is Ferry's; without one, Ferry makes a substitute.
        private func checkGUID(_ at: String, _ episode: FeedEpisode, _ gofeed: String?) {
            if let gofeed {
                check(at + "guid", episode.guid, gofeed.trimmingCharacters(in: .whitespacesAndNewlines))
            } else {
                check(at + "guid is a substitute", episode.guid.hasPrefix("ferry-sha256:"), true)
            }
        }

        /// The first `alternate` link's `href` (Atom's default relation).
        private func alternate(_ links: Any?) -> String? {
            let links = links as? [[String: Any]] ?? []
            return links.first { ($0["rel"] as? String ?? "alternate") == "alternate" && $0["href"] != nil }?["href"] as? String
        }
    }
}
