import Foundation
import Testing

@testable import FerryFeeds

/// The gofeed test corpus in `Tests/Fixtures/feeds`: each `.xml` with a `.json` beside it,
/// gofeed's own parse of it (its RSS or Atom model, not Ferry's).
enum FeedFixtures {
    /// `Tests/Fixtures/feeds`, found from this file (`Tests/FerryFeedsTests/`).
    static let directory: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<2 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Fixtures/feeds")
    }()

    /// Every fixture, as `gofeed-rss/name` or `gofeed-atom/name` (no extension).
    static let all: [String] = ["gofeed-rss", "gofeed-atom"].flatMap { folder in
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(folder).path)) ?? []
        return names.filter { $0.hasSuffix(".xml") }.map { "\(folder)/\($0.dropLast(4))" }.sorted()
    }

    static func xml(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name + ".xml"))
    }

    static func gofeed(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent(name + ".json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func parse(_ name: String) throws -> Feed {
        try FeedParser.parse(xml(name), url: nil)
    }

    /// gofeed keeps titles as the feed wrote them (markup included); Ferry keeps plain text. This is
    /// the plain text of a gofeed value, made without Ferry's code: tags removed, the XML entities
    /// decoded once, whitespace collapsed.
    static func textForm(_ html: String) -> String {
        var stripped = ""
        var index = html.startIndex
        while index < html.endIndex {
            let character = html[index]
            let next = html.index(after: index)
            if character == "<", next < html.endIndex, html[next].isLetter || html[next] == "/" || html[next] == "!",
                let close = html[index...].firstIndex(of: ">")
            {
                stripped += " "
                index = html.index(after: close)
                continue
            }
            stripped.append(character)
            index = next
        }
        var decoded = stripped
        for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&amp;", "&")] {
            decoded = decoded.replacingOccurrences(of: entity, with: character)
        }
        return oneLine(decoded)
    }

    /// Every run of whitespace as one space, none at the ends.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// A date as gofeed writes its parsed dates (`2014-07-06T12:56:00Z`).
    static func gofeedDate(_ text: String) -> Date? {
        ISO8601DateFormatter().date(from: text)
    }

    /// A UTC date from RFC 3339 text, for expected values.
    static func date(_ text: String) -> Date {
        ISO8601DateFormatter().date(from: text)!
    }
}
