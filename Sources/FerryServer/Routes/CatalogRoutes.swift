import FerryCore
import FerryKit
import FerryListening
import Foundation
import Hummingbird

/// `/v1/catalog`: iTunes search and lookup, and song preview downloads.
struct CatalogRoutes {
    let catalog: CatalogLibrary

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.get("catalog/search") { request, context in
            let query = request.uri.queryParameters
            guard let term = query.get("term") else {
                throw FerryError.invalidRequest("Give the search text as ?term=...")
            }
            let media: CatalogQuery.Media
            switch query.get("media") ?? "music" {
            case "music", "songs", "song": media = .songs
            case "podcast", "podcasts": media = .podcasts
            case let other: throw FerryError.invalidRequest("media must be music or podcast, not '\(other.prefix(40))'.")
            }
            let limit = try query.get("limit").map { text throws(FerryError) in
                guard let value = Int(text) else { throw FerryError.invalidRequest("limit must be a number from 1 to 200.") }
                return value
            } ?? 50
            let explicit = query.get("explicit").map { $0 != "false" && $0 != "no" && $0 != "0" } ?? true
            let search = CatalogQuery(term: term, media: media, country: query.get("country") ?? "US", limit: limit, explicit: explicit)
            // Type-ahead: a client's newer search cancels its older one still in flight.
            let key = query.get("client").map { "client:\($0)" }
            return try jsonResponse(CatalogSearchResponse(results: try await catalog.as(context.listener).search(search, replacing: key)))
        }
        api.get("catalog/lookup") { request, context in
            guard let text = request.uri.queryParameters.get("id"), let id = Int64(text), id > 0 else {
                throw FerryError.invalidRequest("Give a catalog id as ?id=123.")
            }
            return try jsonResponse(try await catalog.as(context.listener).lookup(id: id))
        }
        api.post("catalog/previews") { request, context in
            let body = try await request.decodeJSON(PreviewRequest.self, context: context)
            let session = body.session ?? "web"
            try TransferEngine.validateSession(session)
            return try jsonResponse(try await catalog.as(context.listener).downloadPreview(trackId: body.trackId, session: session), status: .created)
        }
    }
}
