import FerryModel
import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// OPML subscription lists, the file every podcast app imports and exports.
///
/// Read with the same care as feeds (``XMLRepair``: entity declarations refused, bytes repaired)
/// and written as OPML 2.0.
public enum OPML {
    /// One subscription: an `<outline>` with an `xmlUrl`.
    public struct Outline: Codable, Sendable, Hashable {
        /// The outline's `title`, else its `text`; plain text, may be empty.
        public var title: String
        /// The feed.
        public var xmlURL: URL
        /// The show's web page.
        public var htmlURL: URL?

        public init(title: String, xmlURL: URL, htmlURL: URL? = nil) {
            self.title = title
            self.xmlURL = xmlURL
            self.htmlURL = htmlURL
        }
    }

    /// The subscriptions in an OPML file, in document order. Folders are flattened: an outline
    /// without an `xmlUrl` contributes only the outlines inside it. An `xmlUrl` that is not an
    /// absolute URL is skipped.
    /// - Throws: `opml_invalid` when the data is not XML, not OPML, refused, too large, or
    ///   broken before any subscription.
    public static func parse(_ data: Data, maximumBytes: Int = 16 << 20) throws(FerryError) -> [Outline] {
        guard data.count <= maximumBytes else {
            throw FerryError(
                .opmlInvalid,
                "The OPML file is \(data.count) bytes, more than the limit of \(maximumBytes) bytes, "
                    + "so it was not read.")
        }
        let prepared: Data
        do {
            prepared = try XMLRepair.prepare(data)
        } catch {
            throw FerryError(
                .opmlInvalid,
                "The OPML file was refused: \(error.reason). Ferry never reads DOCTYPE or entity declarations; "
                    + "remove them from the file and import it again.")
        }
        guard prepared.contains(where: { !HTMLTokenizer.isSpace($0) }) else {
            throw notOPML("the file is empty")
        }
        let handler = OPMLXMLHandler()
        let parser = XMLParser(data: prepared)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = handler
        let broken = !parser.parse() || handler.firstError != nil  // See FeedParser.

        if let root = handler.foreignRoot {
            let hint = ["rss", "feed", "RDF"].contains(root) ? "; it is a feed, so subscribe to its URL instead" : ""
            throw notOPML("its root element is <\(root)>, where OPML has <opml>\(hint)")
        }
        guard handler.isOPML else {
            throw notOPML("it is not XML (\(FeedParser.describe(handler.firstError)))")
        }
        if broken, handler.outlines.isEmpty {
            throw FerryError(
                .opmlInvalid,
                "The OPML file is broken (\(FeedParser.describe(handler.firstError))) before any subscription. "
                    + "Export it again from the app it came from.")
        }
        return handler.outlines
    }

    private static func notOPML(_ reason: String) -> FerryError {
        FerryError(.opmlInvalid, "This is not an OPML file: \(reason).")
    }
}

/// The `XMLParser` delegate behind ``OPML/parse(_:maximumBytes:)``.
final class OPMLXMLHandler: NSObject, XMLParserDelegate {
    private(set) var outlines: [OPML.Outline] = []
    private(set) var isOPML = false
    private(set) var foreignRoot: String?
    private(set) var firstError: (code: Int, line: Int, column: Int)?
    private var depth = 0

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        depth += 1
        if depth == 1 {
            if name.lowercased() == "opml" {
                isOPML = true
            } else {
                foreignRoot = name
                parser.abortParsing()
            }
            return
        }
        guard name == "outline" else { return }
        // Exporters disagree on case: `xmlUrl`, `xmlURL`, `xmlurl`.
        var lowercased: [String: String] = [:]
        for (key, value) in attributes { lowercased[key.lowercased()] = value }
        guard let written = lowercased["xmlurl"], let url = FeedText.url(written, base: nil) else { return }
        let title = FeedText.nonEmpty(lowercased["title"]) ?? lowercased["text"] ?? ""
        outlines.append(
            OPML.Outline(
                title: HTMLSanitizer.singleLine(title), xmlURL: url,
                htmlURL: lowercased["htmlurl"].flatMap { FeedText.url($0, base: nil) }))
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        depth -= 1
    }

    func parser(_ parser: XMLParser, parseErrorOccurred error: Error) {
        let code = (error as NSError).code
        guard firstError == nil, !FeedXMLHandler.namespaceWarnings.contains(code) else { return }
        firstError = (code, parser.lineNumber, parser.columnNumber)
    }
}
