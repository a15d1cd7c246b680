import FerryFeeds
import FerryKit
import Foundation

/// One call to the catalog, validated: the endpoint, its query parameters in order, and the
/// key under which identical calls share a cache entry and an in-flight request.
struct CatalogRequest: Sendable, Hashable {
    enum Endpoint: String, Sendable {
        case search, lookup
    }

    struct Parameter: Sendable, Hashable {
        var name: String
        var value: String
    }

    var endpoint: Endpoint
    var parameters: [Parameter]
    /// The same for requests Apple answers alike (the search term's case is ignored).
    var key: String

    static let maxLookupIDs = 200

    static func search(_ query: CatalogQuery) throws -> CatalogRequest {
        let query = try query.normalized()
        let (media, entity) = query.media.parameters
        func parameters(term: String) -> [Parameter] {
            [
                .init(name: "term", value: term), .init(name: "media", value: media), .init(name: "entity", value: entity),
                .init(name: "country", value: query.country), .init(name: "limit", value: String(query.limit)),
                .init(name: "explicit", value: query.explicit ? "Yes" : "No"),
            ]
        }
        return CatalogRequest(
            endpoint: .search, parameters: parameters(term: query.term),
            key: "search?" + encodedQuery(parameters(term: query.term.lowercased()))
        )
    }

    /// - Throws: `invalid_request` for no ids, too many, or one that is not positive.
    static func lookup(ids: [Int64]) throws -> CatalogRequest {
        guard !ids.isEmpty else { throw FerryError.invalidRequest("Give at least one catalog id to look up.") }
        guard ids.count <= maxLookupIDs else {
            throw FerryError.invalidRequest("At most \(maxLookupIDs) ids can be looked up at once; got \(ids.count).")
        }
        if let bad = ids.first(where: { $0 <= 0 }) {
            throw FerryError.invalidRequest("Catalog ids are positive numbers; got \(bad).")
        }
        let parameters = [Parameter(name: "id", value: ids.map(String.init).joined(separator: ","))]
        return CatalogRequest(endpoint: .lookup, parameters: parameters, key: "lookup?" + encodedQuery(parameters))
    }

    /// `{base}/search?...`; a path in the base is kept (`http://host/itunes` → `/itunes/search`).
    func url(base: URL) -> String {
        var prefix = base.absoluteString
        while prefix.hasSuffix("/") { prefix.removeLast() }
        return "\(prefix)/\(endpoint.rawValue)?\(Self.encodedQuery(parameters))"
    }

    static func encodedQuery(_ parameters: [Parameter]) -> String {
        parameters.map { "\(percentEncoded($0.name))=\(percentEncoded($0.value))" }.joined(separator: "&")
    }

    /// Every byte of the UTF-8 text except RFC 3986's unreserved characters becomes `%XX`.
    /// Stricter than `URLComponents`, which leaves `+`, `/`, `?` (and on some platforms `&`
    /// and `=`) alone: a server that reads forms takes a bare `+` for a space.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "%")))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0x0F)]))
            }
        }
        return out
    }
}
