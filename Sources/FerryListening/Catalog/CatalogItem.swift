import Crypto
import Foundation

/// One song, podcast or other result of Apple's catalog, in Ferry's own shape.
///
/// Apple's JSON is read by ``AppleCatalogResult``, which tolerates what the real service sends
/// (nulls, numbers as strings, missing fields); this type's `Codable` form is the one Ferry's
/// own API sends, so it round-trips exactly. Every text and URL here came from Apple and is
/// untrusted: show it as text, never as HTML.
package struct CatalogItem: Codable, Sendable, Hashable, Identifiable {
    package enum Kind: String, Codable, Sendable, Hashable {
        case song, podcast, other

        /// Unknown kinds (a newer Ferry's) read as `other` rather than failing the whole item.
        package init(from decoder: any Decoder) throws {
            self = Kind(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .other
        }
    }

    package var kind: Kind
    package var trackId: Int64?
    package var collectionId: Int64?
    package var artistId: Int64?
    package var trackName: String?
    package var artistName: String?
    package var collectionName: String?
    /// The 30-second preview (songs); podcasts have none.
    package var previewURL: URL?
    /// The largest artwork Apple offers (600, else 100, else 60 pixels).
    package var artworkURL: URL?
    /// The podcast's RSS feed.
    package var feedURL: URL?
    /// The item's page on Apple's site (the collection's page for a collection).
    package var trackViewURL: URL?
    package var durationSeconds: Double?
    package var releaseDate: Date?
    package var primaryGenre: String?
    /// As Apple spells it: three letters (`USA`), unlike the two-letter query parameter.
    package var country: String?
    package var explicit: Bool
    package var trackNumber: Int?

    package init(
        kind: Kind, trackId: Int64? = nil, collectionId: Int64? = nil, artistId: Int64? = nil, trackName: String? = nil,
        artistName: String? = nil, collectionName: String? = nil, previewURL: URL? = nil, artworkURL: URL? = nil,
        feedURL: URL? = nil, trackViewURL: URL? = nil, durationSeconds: Double? = nil, releaseDate: Date? = nil,
        primaryGenre: String? = nil, country: String? = nil, explicit: Bool = false, trackNumber: Int? = nil
    ) {
        self.kind = kind
        self.trackId = trackId
        self.collectionId = collectionId
        self.artistId = artistId
        self.trackName = trackName
        self.artistName = artistName
        self.collectionName = collectionName
        self.previewURL = previewURL
        self.artworkURL = artworkURL
        self.feedURL = feedURL
        self.trackViewURL = trackViewURL
        self.durationSeconds = durationSeconds
        self.releaseDate = releaseDate
        self.primaryGenre = primaryGenre
        self.country = country
        self.explicit = explicit
        self.trackNumber = trackNumber
    }

    /// Stable across runs and processes: Apple's track id, else its collection id (both are
    /// Apple ids from one number space), else a hash of what the item shows, prefixed `h`.
    package var id: String {
        if let trackId { return String(trackId) }
        if let collectionId { return String(collectionId) }
        // Not `Hasher`: it is seeded per process, and ids must survive a restart.
        let text = [kind.rawValue, artistName ?? "", collectionName ?? "", trackName ?? "", previewURL?.absoluteString ?? ""]
            .joined(separator: "\u{1F}")
        return "h" + SHA256.hash(data: Data(text.utf8)).prefix(8).hexText
    }

    /// The name to show: the track's, else the collection's, else the artist's.
    package var title: String { trackName ?? collectionName ?? artistName ?? "" }
}
