import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The `XMLParser` delegate behind ``FeedParser``: a stack of open elements, each with the
/// context it opened (channel, item, image, ...) and its `xml:base`, and at most one element
/// whose text is being captured. Which element means what lives in `FeedXMLHandler+Elements`.
///
/// Nothing is kept but the fields Ferry models, so memory follows the feed's useful content, not
/// its size; an unknown element is skipped with everything inside it.
final class FeedXMLHandler: NSObject, XMLParserDelegate {
    enum Context: Equatable {
        case feed, episode, image, owner, feedAuthor, episodeAuthor, skip
        /// `podcast:podroll` (its `remoteItem`s) and `podcast:alternateEnclosure` (its sources).
        case podroll, alternateEnclosure
    }

    struct Frame {
        var context: Context
        var base: URL?
        var opensEpisode = false
        /// An Atom `xhtml` text's wrapping `<div>`, which is not part of the text.
        var isWrapper = false
    }

    enum Target {
        case feed, episode
    }

    /// A text-valued element Ferry reads; which builder property it fills depends on the target.
    enum Field {
        case title, itunesTitle, dcTitle, link, guid, pubDate, dcDate, published, updated
        case contentEncoded, content, description, summary, itunesSummary, itunesSubtitle, otherDescription
        case author, itunesAuthor, dcCreator, duration, explicit, season, episodeNumber, episodeType
        case language, dcLanguage, imageURL, logo, icon, ownerName, ownerEmail, newFeedURL, podcastGUID
        /// Podcasting 2.0 elements whose attributes matter as much as their text.
        case person, funding, locked, medium, license, updateFrequency, txt, trailer, podcastSeason, podcastEpisode, soundbite

        var isPodcasting: Bool {
            switch self {
            case .person, .funding, .locked, .medium, .license, .updateFrequency, .txt, .trailer, .podcastSeason, .podcastEpisode, .soundbite: true
            default: false
            }
        }
    }

    /// The element being read. Its text arrives in pieces; child elements (markup written
    /// unescaped into RSS, or Atom `xhtml`) are written back out as markup.
    struct Capture {
        let field: Field
        let target: Target
        /// `frames.count` while the element is open.
        let depth: Int
        let attributes: [String: String]
        let base: URL?
        /// Atom text constructs follow `type`; RSS texts are judged by their content.
        let isAtomText: Bool
        var text = ""
        /// Set from the first child element on: the text escaped, with the children's markup.
        var markup: String?
        /// Whether the only child so far is an `xhtml` wrapping `div`, left out of `markup`.
        var isOnlyWrapped = false

        var value: String { markup ?? text }
    }

    let feedURL: URL?
    let maximumEpisodes: Int
    var feed = FeedBuilder()
    var episode: EpisodeBuilder?
    var episodes: [FeedEpisode] = []
    /// Set once the root element is a feed's.
    var isFeed = false
    var isAtom03 = false
    /// The root element's namespace: the format's own, whatever the feed declared.
    var rootNamespace = FeedNamespace.none
    /// The root element's name when it is not a feed's.
    private(set) var foreignRoot: String?
    /// The first error that is not a namespace warning: libxml2 code, line and column.
    private(set) var firstError: (code: Int, line: Int, column: Int)?
    var frames: [Frame] = []
    var capture: Capture?
    private var namespaces: [String: FeedNamespace] = [:]

    init(feedURL: URL?, maximumEpisodes: Int) {
        self.feedURL = feedURL
        self.maximumEpisodes = maximumEpisodes
    }

    func result() -> Feed {
        feed.build(episodes: episodes)
    }

    // MARK: - XMLParserDelegate

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        var frame = Frame(context: .skip, base: frames.last?.base ?? feedURL)
        if let xmlBase = attributes["xml:base"], let base = FeedText.url(xmlBase, base: frame.base) {
            frame.base = base
        }
        let namespace = self.namespace(namespaceURI, qualifiedName)
        if capture != nil {
            writeChild(name, qualifiedName: qualifiedName, namespace: namespace, attributes: attributes, frame: &frame)
        } else if let parent = frames.last {
            frame.context = start(
                name, namespace: namespace, attributes: attributes, in: parent.context, base: frame.base)
            frame.opensEpisode = parent.context != .episode && frame.context == .episode
        } else if startRoot(name, namespace: namespace, attributes: attributes) {
            frame.context = .feed
        } else {
            foreignRoot = qualifiedName ?? name
            parser.abortParsing()
        }
        frames.append(frame)
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        let depth = frames.count
        guard let frame = frames.popLast() else { return }
        if let open = capture {
            if depth == open.depth {
                capture = nil
                finish(open)
            } else if !frame.isWrapper {
                capture?.markup?.append("</\(qualifiedName ?? name)>")
            }
            return
        }
        if frame.opensEpisode, let finished = episode {
            episodes.append(finished.build())
            episode = nil
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard capture != nil else { return }
        capture?.text.append(string)
        if capture?.markup != nil { capture?.markup?.append(HTMLSanitizer.escape(string)) }
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        guard capture != nil else { return }
        let string = String(decoding: block, as: UTF8.self)
        capture?.text.append(string)
        capture?.markup?.append(string)  // CDATA in a feed holds HTML.
    }

    func parser(_ parser: XMLParser, parseErrorOccurred error: Error) {
        let code = (error as NSError).code
        guard firstError == nil, !Self.namespaceWarnings.contains(code) else { return }
        firstError = (code, parser.lineNumber, parser.columnNumber)
    }

    /// libxml2's namespace errors and warnings (undeclared prefix, relative URI): the document
    /// is still read, with the prefix deciding (see ``FeedNamespace``).
    static let namespaceWarnings: Set<Int> = [99, 100, 200, 201, 202, 203, 204]

    // MARK: - Pieces

    private func namespace(_ uri: String?, _ qualifiedName: String?) -> FeedNamespace {
        if let uri, !uri.isEmpty {
            if let known = namespaces[uri] { return known }
            let namespace = FeedNamespace(uri: uri)
            namespaces[uri] = namespace
            return namespace
        }
        if let qualifiedName, let colon = qualifiedName.firstIndex(of: ":") {
            return FeedNamespace(prefix: qualifiedName[..<colon])
        }
        return .none
    }

    /// Inside a captured element: markup to keep, except an `xhtml` text's wrapping `div`.
    private func writeChild(
        _ name: String, qualifiedName: String?, namespace: FeedNamespace, attributes: [String: String],
        frame: inout Frame
    ) {
        guard let open = capture else { return }
        capture?.isOnlyWrapped = false
        if open.markup == nil {
            capture?.markup = HTMLSanitizer.escape(open.text)
            if frames.count == open.depth, namespace == .xhtml, name == "div", open.text.allSatisfy(\.isWhitespace) {
                capture?.markup = ""
                capture?.isOnlyWrapped = true
                frame.isWrapper = true
                return
            }
        }
        var tag = "<" + (qualifiedName ?? name)
        for (key, value) in attributes.sorted(by: { $0.key < $1.key }) where !key.hasPrefix("xmlns") {
            tag += " \(key)=\"\(HTMLSanitizer.escape(value, attribute: true))\""
        }
        capture?.markup?.append(tag + ">")
    }

    func beginCapture(
        _ field: Field, _ target: Target, attributes: [String: String], base: URL?, atomText: Bool = false
    ) {
        capture = Capture(
            field: field, target: target, depth: frames.count + 1, attributes: attributes, base: base,
            isAtomText: atomText)
    }

    private func finish(_ capture: Capture) {
        if capture.field.isPodcasting {
            assignPodcasting(FeedText(capture.value, kind: capture.markup == nil ? .unknown : .html, base: capture.base), capture)
            return
        }
        var text = FeedText(capture.value, kind: capture.markup == nil ? .unknown : .html, base: capture.base)
        if capture.isAtomText { text = atomText(capture) }
        assign(text, to: capture.field, of: capture.target)
    }

    /// An Atom text construct, read as its `type` (1.0) or `mode` (0.3) says.
    private func atomText(_ capture: Capture) -> FeedText {
        let type = capture.attributes["type"].map { FeedText.trim($0).lowercased() }
        var value = capture.value
        var kind: FeedText.Kind = capture.markup == nil ? .unknown : .html
        if isAtom03 {
            let mode = capture.attributes["mode"]?.lowercased()
            if mode == "base64" { value = Self.base64Decoded(value) ?? value }
            if mode == "escaped" || type?.contains("html") == true { kind = .html }
        } else {
            switch type ?? "text" {
            case "html", "text/html":
                // Escaped HTML inside an xhtml `div`, which should not be there: the div's text.
                if capture.isOnlyWrapped { value = capture.text }
                kind = .html
            case "xhtml", "application/xhtml+xml":
                kind = .html
            case let mime where Self.isBinary(mime):
                value = Self.base64Decoded(value) ?? value
            default:  // Text, or another text or XML media type, written as escaped text.
                if capture.markup == nil { kind = .plain }
            }
        }
        return FeedText(value, kind: kind, base: capture.base)
    }

    /// Atom 1.0 §3.1.1.3: other media types are base64, unless they are text or XML.
    private static func isBinary(_ mime: String) -> Bool {
        ["image/", "audio/", "video/"].contains(where: mime.hasPrefix) || mime == "application/octet-stream"
    }

    private static func base64Decoded(_ text: String) -> String? {
        guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
