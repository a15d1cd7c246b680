import AsyncHTTPClient
import Foundation
import NIOCore

/// The catalog and podcast endpoints.
extension DaemonClient {
    /// Searches the iTunes catalog.
    /// - Parameters:
    ///   - media: `music` or `podcast`.
    ///   - client: a key for type-ahead: a newer search with the same key cancels this one.
    public func search(
        _ term: String, media: String = "music", limit: Int = 50, country: String = "US", client: String? = nil
    ) async throws -> [CatalogResult] {
        var items = [
            URLQueryItem(name: "term", value: term), URLQueryItem(name: "media", value: media),
            URLQueryItem(name: "limit", value: String(limit)), URLQueryItem(name: "country", value: country),
        ]
        if let client { items.append(URLQueryItem(name: "client", value: client)) }
        let response: CatalogSearchResponse = try await send(.GET, "/v1/catalog/search?" + Self.query(items))
        return response.results
    }

    public func lookup(catalogId: Int64) async throws -> CatalogResult {
        try await send(.GET, "/v1/catalog/lookup?id=\(catalogId)")
    }

    /// Downloads a song's preview into `Music/`.
    public func downloadPreview(trackId: Int64, session: String) async throws -> Transfer {
        try await send(.POST, "/v1/catalog/previews", body: PreviewRequest(trackId: trackId, session: session))
    }

    public func podcasts() async throws -> [Podcast] {
        let list: PodcastList = try await send(.GET, "/v1/podcasts")
        return list.podcasts
    }

    /// Subscribes by feed URL or Apple Podcasts page URL, or by catalog id.
    public func subscribe(url: String? = nil, catalogId: Int64? = nil) async throws -> PodcastDetail {
        try await send(.POST, "/v1/podcasts", body: SubscribeRequest(url: url, catalogId: catalogId))
    }

    public func podcast(_ id: Int64) async throws -> PodcastDetail {
        try await send(.GET, "/v1/podcasts/\(id)")
    }

    public func updatePodcast(_ id: Int64, _ settings: PodcastSettings) async throws -> PodcastDetail {
        try await send(.PATCH, "/v1/podcasts/\(id)", body: settings)
    }

    public func unsubscribe(_ id: Int64, deleteFiles: Bool = false) async throws {
        let _: Empty = try await send(.DELETE, "/v1/podcasts/\(id)" + (deleteFiles ? "?deleteFiles=true" : ""))
    }

    /// Refreshes one podcast, or all when `id` is nil.
    public func refreshPodcasts(_ id: Int64? = nil) async throws -> RefreshResponse {
        try await send(.POST, id.map { "/v1/podcasts/\($0)/refresh" } ?? "/v1/podcasts/refresh")
    }

    public func downloadEpisode(_ id: Int64, session: String) async throws -> Transfer {
        try await send(.POST, "/v1/episodes/\(id)/download", body: EpisodeDownloadRequest(session: session))
    }

    public func importOPML(_ data: Data) async throws -> ImportResponse {
        var request = request(.POST, "/v1/podcasts/import")
        request.headers.add(name: "Content-Type", value: "text/x-opml")
        request.body = .bytes(ByteBuffer(bytes: data))
        return try await decode(request, timeout: .seconds(600))
    }

    public func exportOPML() async throws -> String {
        let request = request(.GET, "/v1/podcasts/export")
        let response = try await http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 16 << 20)
        guard response.status == .ok else { throw Self.error(status: response.status, body: body) }
        return String(buffer: body)
    }

    /// A one-time link that logs a browser into the web app (valid a few minutes).
    public func loginLink() async throws -> LoginLink {
        try await send(.POST, "/v1/login-links")
    }

    static func query(_ items: [URLQueryItem]) -> String {
        var components = URLComponents()
        components.queryItems = items
        // URLComponents leaves '+' alone, which servers read as a space.
        return (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
    }
}
