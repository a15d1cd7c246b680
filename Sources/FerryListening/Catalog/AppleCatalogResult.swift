import FerryCore
import Foundation

/// One entry of Apple's `results` array, read the way the real service sends it: ids and URLs
/// may be `null`, numbers may come as strings (`"trackId": "123"`), fields may be missing and
/// `wrapperType`/`kind` may be values Ferry has never seen. A field that cannot be read is left
/// empty; only an entry with no name at all (or that is not an object) fails, so that the
/// response can skip it and keep the rest.
struct AppleCatalogResult: Decodable {
    var item: CatalogItem

    private enum Key: String, CodingKey {
        case wrapperType, kind, trackId, collectionId, artistId, trackName, artistName, collectionName
        case previewUrl, artworkUrl600, artworkUrl100, artworkUrl60, feedUrl, trackViewUrl, collectionViewUrl
        case trackTimeMillis, releaseDate, primaryGenreName, country, trackExplicitness, collectionExplicitness
        case trackNumber
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let trackName = c.lenientString(.trackName)
        let collectionName = c.lenientString(.collectionName)
        let artistName = c.lenientString(.artistName)
        guard trackName != nil || collectionName != nil || artistName != nil else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a result with no name"))
        }
        let kind: CatalogItem.Kind =
            switch c.lenientString(.kind) {
            case "song": .song
            case "podcast": .podcast
            default: .other
            }
        let explicitness = c.lenientString(.trackExplicitness) ?? c.lenientString(.collectionExplicitness)
        item = CatalogItem(
            kind: kind,
            trackId: c.lenientInt64(.trackId),
            collectionId: c.lenientInt64(.collectionId),
            artistId: c.lenientInt64(.artistId),
            trackName: trackName,
            artistName: artistName,
            collectionName: collectionName,
            previewURL: c.lenientURL(.previewUrl),
            artworkURL: c.lenientURL(.artworkUrl600) ?? c.lenientURL(.artworkUrl100) ?? c.lenientURL(.artworkUrl60),
            feedURL: c.lenientURL(.feedUrl),
            trackViewURL: c.lenientURL(.trackViewUrl) ?? c.lenientURL(.collectionViewUrl),
            durationSeconds: c.lenientDouble(.trackTimeMillis).flatMap { $0 >= 0 ? $0 / 1000 : nil },
            releaseDate: c.lenientString(.releaseDate).flatMap(CatalogDate.parse),
            primaryGenre: c.lenientString(.primaryGenreName),
            country: c.lenientString(.country),
            explicit: explicitness == "explicit",
            trackNumber: c.lenientInt64(.trackNumber).flatMap { Int(exactly: $0) }
        )
    }
}

extension KeyedDecodingContainer {
    /// A string, or a number written as one; nil when absent, null, empty or of another type.
    func lenientString(_ key: Key) -> String? {
        if let text = try? decodeIfPresent(String.self, forKey: key) { return text.isEmpty ? nil : text }
        if let number = try? decodeIfPresent(Int64.self, forKey: key) { return String(number) }
        return nil
    }

    /// An integer, or a string of digits; nil otherwise.
    func lenientInt64(_ key: Key) -> Int64? {
        if let number = try? decodeIfPresent(Int64.self, forKey: key) { return number }
        if let number = try? decodeIfPresent(Double.self, forKey: key) { return Int64(exactly: number) }
        if let text = try? decodeIfPresent(String.self, forKey: key) { return Int64(text.trimmingWhitespace()) }
        return nil
    }

    /// A number, or a string holding one; nil otherwise.
    func lenientDouble(_ key: Key) -> Double? {
        if let number = try? decodeIfPresent(Double.self, forKey: key) { return number.isFinite ? number : nil }
        if let text = try? decodeIfPresent(String.self, forKey: key), let number = Double(text.trimmingWhitespace()) {
            return number.isFinite ? number : nil
        }
        return nil
    }

    /// An absolute `http` or `https` URL. Anything else (`javascript:`, relative paths) is
    /// dropped: these URLs end up as links and media sources in the web app.
    func lenientURL(_ key: Key) -> URL? {
        guard let text = lenientString(key), let url = URL(string: String(text.trimmingWhitespace())),
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil
        else { return nil }
        return url
    }
}
