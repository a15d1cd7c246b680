import FerryModel
import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads RSS 0.9x/2.0, RSS 1.0 (RDF) and Atom 0.3/1.0 feeds, with the iTunes, Podcasting 2.0,
/// `content`, Dublin Core and Media RSS extensions, into a ``Feed``.
///
/// DESIGN: "XML is parsed with the streaming XMLParser, external entities off, DOCTYPE refused,
/// sizes capped". Before parsing, ``XMLRepair`` refuses entity declarations and repairs what
/// real feeds get wrong (bad UTF-8, bare `&`, HTML entities), because a listener is better served
/// by a feed with one odd character than by an error. If the XML is still broken, what libxml2
/// could read is kept when it has a title, an episode or any other field.
public enum FeedParser {
    /// Parses a feed.
    /// - Parameters:
    ///   - data: the document as fetched.
    ///   - url: where it was fetched from: relative URLs (enclosures, links, artwork) resolve
    ///     against it (or against `xml:base`). Nil leaves relative URLs out.
    ///   - maximumBytes: larger documents are refused (`feed_too_large`) without being read.
    ///   - maximumEpisodes: items after this many are skipped, to bound memory.
    /// - Throws: `feed_invalid` when the document is not a feed, is refused, or is broken before
    ///   anything useful; `feed_too_large`.
    public static func parse(
        _ data: Data, url: URL?, maximumBytes: Int = 64 << 20, maximumEpisodes: Int = 100_000
    ) throws(FerryError) -> Feed {
        guard data.count <= maximumBytes else {
            throw FerryError(
                .feedTooLarge,
                "The feed is \(data.count) bytes, more than the limit of \(maximumBytes) bytes, so it was not read. "
                    + "Check that the URL is the podcast's feed and not an episode's audio file.")
        }
        let prepared: Data
        do {
            prepared = try XMLRepair.prepare(data)
        } catch {
            throw FerryError(
                .feedInvalid,
                "The feed was refused: \(error.reason). Ferry never reads DOCTYPE or entity declarations, because "
                    + "they can expand into gigabytes of text or read local files; ask the publisher to remove them.")
        }
        guard prepared.contains(where: { !HTMLTokenizer.isSpace($0) }) else {
            throw notAFeed("the document is empty. Check the feed's URL")
        }
        let handler = FeedXMLHandler(feedURL: url, maximumEpisodes: maximumEpisodes)
        // A stream, not `XMLParser(data:)`: that copies the whole document once more and hands
        // libxml2 one chunk it copies again (57 MiB of 132 at peak for a 23 MiB feed, heaptrack).
        let parser = XMLParser(stream: DataInputStream(prepared))
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = handler
        // libxml2 recovers from many errors and XMLParser then reports success: the error tells.
        let broken = !parser.parse() || handler.firstError != nil

        if let root = handler.foreignRoot {
            throw notAFeed(describe(root: root))
        }
        guard handler.isFeed else {
            throw notAFeed("it is not XML (\(describe(handler.firstError)))")
        }
        if broken, !handler.feed.hasContent, handler.episodes.isEmpty {
            throw FerryError(
                .feedInvalid,
                "The feed is broken: its XML stops making sense (\(describe(handler.firstError))) before a title, "
                    + "an episode or anything else of use. Ask the publisher to check it with a feed validator.")
        }
        return handler.result()
    }

    private static func notAFeed(_ reason: String) -> FerryError {
        FerryError(.feedInvalid, "This is not an RSS or Atom feed: \(reason).")
    }

    private static func describe(root: String) -> String {
        switch root.lowercased() {
        case "opml": "it is an OPML subscription list (root element <opml>); import it as OPML instead"
        case "html": "it is a web page (root element <html>); look on that page for the podcast's RSS link"
        default: "its root element is <\(root)>, where a feed has <rss>, <rdf:RDF> or <feed>"
        }
    }

    /// A libxml2 error as a place in the document, with the commonest causes in words.
    static func describe(_ error: (code: Int, line: Int, column: Int)?) -> String {
        guard let error else { return "the XML parser stopped" }
        let causes = [
            4: "no XML at all", 5: "the document ends too soon, or goes on after its end", 9: "an invalid character",
            73: "an unfinished tag", 76: "a closing tag that does not match", 77: "an unclosed tag",
        ]
        let cause = causes[error.code].map { ": \($0)" } ?? " (libxml2 error \(error.code))"
        return "line \(error.line), column \(error.column)\(cause)"
    }
}
