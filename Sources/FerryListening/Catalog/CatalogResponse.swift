import FerryKit
import Foundation

/// The body of a successful search or lookup: `{"resultCount": n, "results": [...]}`.
///
/// Apple labels it `text/javascript; charset=utf-8` and has been seen to start it with blank
/// lines, so the content type is not checked and leading whitespace (and a byte-order mark)
/// is dropped. Results that cannot be read at all are skipped and counted, never fatal.
struct CatalogResponse: Sendable, Equatable {
    var items: [CatalogItem]
    /// Results that were not objects or had no name.
    var skipped: Int

    private struct Envelope: Decodable {
        var results: [Lenient]?
        var errorMessage: String?
    }

    /// Decodes one result, or records that it could not be: the array keeps going either way.
    private struct Lenient: Decodable {
        var item: CatalogItem?
        init(from decoder: any Decoder) throws { item = try? AppleCatalogResult(from: decoder).item }
    }

    /// - Parameters:
    ///   - contentType: only for the error message.
    ///   - source: where the body came from, for the error message.
    /// - Throws: `catalog_bad_response` when the body is not the JSON Apple sends, or
    ///   `catalog_bad_request` when it carries Apple's `errorMessage` instead of results.
    static func decode(_ body: Data, contentType: String?, source: String) throws -> CatalogResponse {
        var json = body[...]
        if json.starts(with: [0xEF, 0xBB, 0xBF]) { json = json.dropFirst(3) }
        json = json.drop { byte in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: Data(json))
        } catch {
            throw CatalogFailure.notJSON(contentType: contentType, source: source)
        }
        guard let results = envelope.results else {
            if let message = envelope.errorMessage { throw CatalogFailure.badRequest(appleMessage: message) }
            throw FerryError(
                .catalogBadResponse,
                "The catalog at \(source) answered JSON without a \"results\" list; check FERRY_CATALOG_URL, or try again later."
            )
        }
        let items = results.compactMap(\.item)
        return CatalogResponse(items: items, skipped: results.count - items.count)
    }
}
