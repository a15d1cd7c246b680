import FerryFeeds
import FerryKit

/// A search of Apple's catalog: `GET /search?term=...&media=...&entity=...`.
package struct CatalogQuery: Sendable, Hashable, Codable {
    package enum Media: String, Sendable, Hashable, Codable {
        /// `media=music&entity=song`
        case songs
        /// `media=podcast&entity=podcast`
        case podcasts

        var parameters: (media: String, entity: String) {
            switch self {
            case .songs: ("music", "song")
            case .podcasts: ("podcast", "podcast")
            }
        }
    }

    /// What the listener typed. Sent as typed, but trimmed and with runs of whitespace made one
    /// space; the cache also ignores case.
    package var term: String
    package var media: Media
    /// The store to search: two letters (ISO 3166-1 alpha-2), any case.
    package var country: String
    /// Results wanted, 1 to 200 (Apple's own maximum).
    package var limit: Int
    /// Whether explicit content may be returned.
    package var explicit: Bool

    package static let limits = 1...200
    package static let maxTermLength = 256

    package init(term: String, media: Media = .songs, country: String = "US", limit: Int = 50, explicit: Bool = true) {
        self.term = term
        self.media = media
        self.country = country
        self.limit = limit
        self.explicit = explicit
    }

    /// The query as it is sent: term tidied, country upper-cased.
    /// - Throws: `invalid_request` saying which value is wrong and what is allowed.
    package func normalized() throws -> CatalogQuery {
        var query = self
        query.term = term.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        query.country = country.uppercased()
        guard !query.term.isEmpty else { throw FerryError.invalidRequest("The search term is empty; type something to search for.") }
        guard query.term.count <= Self.maxTermLength else {
            throw FerryError.invalidRequest(
                "The search term is \(query.term.count) characters long; at most \(Self.maxTermLength) are allowed."
            )
        }
        guard query.country.count == 2, query.country.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw FerryError.invalidRequest("The country must be a two-letter store code such as US or GB; got \"\(country)\".")
        }
        guard Self.limits.contains(limit) else {
            throw FerryError.invalidRequest("The limit must be between 1 and 200 results; got \(limit).")
        }
        return query
    }
}
