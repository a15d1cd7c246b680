import Foundation

/// The XML vocabularies the feed parser understands, told apart by namespace URI, never by
/// prefix: feeds bind `itunes` to anything, and bind the iTunes URI to odd prefixes.
///
/// URIs are compared loosely, as feeds write them loosely: surrounding whitespace, case,
/// `http`/`https`, `www.` and a trailing `/` or `#` do not matter (`http://www.itunes.com/DTDs/
/// PodCast-1.0.dtd` is the iTunes namespace). An element whose prefix was never declared comes
/// from libxml2 without a URI; then the conventional prefix decides, as readers do.
enum FeedNamespace: Sendable, Hashable {
    /// No namespace: RSS 0.9x/2.0 elements, or markup inside descriptions.
    case none
    /// RSS 1.0, RSS 0.90 and UserLand's RSS 2.0 namespaces.
    case rss
    case rdf
    case atom10
    case atom03
    case itunes
    case content
    case dublinCore
    case dublinCoreTerms
    case media
    case podcast
    case xhtml
    case other

    init(uri: String) {
        var key = Substring(FeedText.trim(uri).lowercased())
        for scheme in ["http://", "https://"] where key.hasPrefix(scheme) {
            key = key.dropFirst(scheme.count)
        }
        if key.hasPrefix("www.") { key = key.dropFirst(4) }
        while key.hasSuffix("/") || key.hasSuffix("#") { key = key.dropLast() }
        self = Self.byURI[String(key)] ?? (key.isEmpty ? .none : .other)
    }

    init(prefix: some StringProtocol) {
        self = Self.byPrefix[prefix.lowercased()] ?? .other
    }

    private static let byURI: [String: FeedNamespace] = [
        "purl.org/rss/1.0": .rss,
        "my.netscape.com/rdf/simple/0.9": .rss,
        "channel.netscape.com/rdf/simple/0.9": .rss,
        "backend.userland.com/rss2": .rss,
        "w3.org/1999/02/22-rdf-syntax-ns": .rdf,
        "w3.org/2005/atom": .atom10,
        "purl.org/atom/ns": .atom03,
        "itunes.com/dtds/podcast-1.0.dtd": .itunes,
        "purl.org/rss/1.0/modules/content": .content,
        "purl.org/dc/elements/1.1": .dublinCore,
        "purl.org/dc/terms": .dublinCoreTerms,
        "search.yahoo.com/mrss": .media,
        "podcastindex.org/namespace/1.0": .podcast,
        "github.com/podcastindex-org/podcast-namespace/blob/main/docs/1.0.md": .podcast,
        "w3.org/1999/xhtml": .xhtml,
    ]

    private static let byPrefix: [String: FeedNamespace] = [
        "rdf": .rdf, "atom": .atom10, "itunes": .itunes, "content": .content, "dc": .dublinCore,
        "dcterms": .dublinCoreTerms, "media": .media, "podcast": .podcast, "xhtml": .xhtml,
    ]
}
