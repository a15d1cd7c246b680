import AsyncHTTPClient
import Foundation
import NIOCore

/// The catalog and podcast endpoints.
extension DaemonClient {
    /// Searches the iTunes catalog.
    /// - Parameters:
    ///   - term: the search text.
    ///   - media: `music` or `podcast`.
    ///   - limit: the most results to return (1 to 200).
    ///   - country: the two-letter code of the store to search.
    ///   - client: a key for type-ahead: a newer search with the same key cancels this one.
    /// - Returns: the results, each with what Ferry knows of it (preview download, subscription).
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

    /// One catalog item by its id (a song's track id or a podcast's collection id).
    /// - Throws: ``FerryError`` `not_found` when the catalog has nothing with that id.
    public func lookup(catalogId: Int64) async throws -> CatalogResult {
        try await send(.GET, "/v1/catalog/lookup?id=\(catalogId)")
    }

    /// Downloads a song's preview into `Music/`.
    /// - Parameters:
    ///   - trackId: the song's ``CatalogResult/trackId``.
    ///   - session: the session the transfer belongs to.
    /// - Returns: the transfer; the song's earlier one when it is downloading or downloaded.
    public func downloadPreview(trackId: Int64, session: String) async throws -> Transfer {
        try await send(.POST, "/v1/catalog/previews", body: PreviewRequest(trackId: trackId, session: session))
    }

    /// Every subscription.
    public func podcasts() async throws -> [Podcast] {
        let list: PodcastList = try await send(.GET, "/v1/podcasts")
        return list.podcasts
    }

    /// Subscribes by feed URL or Apple Podcasts page URL, or by catalog id.
    /// - Parameters:
    ///   - user: a private feed's user name (HTTP Basic), with `password`.
    public func subscribe(url: String? = nil, catalogId: Int64? = nil, user: String? = nil, password: String? = nil) async throws -> PodcastDetail {
        try await send(.POST, "/v1/podcasts", body: SubscribeRequest(url: url, catalogId: catalogId, user: user, password: password))
    }

    /// A subscription with its episodes, newest first.
    /// - Throws: ``FerryError`` `not_found` for an unknown id.
    public func podcast(_ id: Int64) async throws -> PodcastDetail {
        try await send(.GET, "/v1/podcasts/\(id)")
    }

    /// Changes a subscription's auto-download and retention settings.
    /// - Parameters:
    ///   - id: the ``Podcast/id``.
    ///   - settings: the settings to change; nil fields keep their value.
    /// - Returns: the subscription with its episodes, as they are now.
    public func updatePodcast(_ id: Int64, _ settings: PodcastSettings) async throws -> PodcastDetail {
        try await send(.PATCH, "/v1/podcasts/\(id)", body: settings)
    }

    /// Tells the daemon these feeds changed (Podping's announcements): each subscription's is
    /// fetched at once, unless a ping fetched it within the last minute. An admin's.
    public func pingFeeds(_ urls: [String]) async throws -> FeedPingResponse {
        try await send(.POST, "/v1/podcasts/ping", body: FeedPing(urls: urls))
    }

    /// Ends a subscription.
    /// - Parameters:
    ///   - id: the ``Podcast/id``.
    ///   - deleteFiles: also delete the podcast's folder with its downloaded episodes.
    public func unsubscribe(_ id: Int64, deleteFiles: Bool = false) async throws {
        let _: Empty = try await send(.DELETE, "/v1/podcasts/\(id)" + (deleteFiles ? "?deleteFiles=true" : ""))
    }

    /// Refreshes one podcast, or all when `id` is nil.
    public func refreshPodcasts(_ id: Int64? = nil) async throws -> RefreshResponse {
        try await send(.POST, id.map { "/v1/podcasts/\($0)/refresh" } ?? "/v1/podcasts/refresh")
    }

    /// Saves where the listener is in an episode: a position (with the duration, which marks it
    /// played near the end), or played / unplayed.
    /// - Throws: ``FerryError`` `not_found` for an unknown episode, `invalid_request` for a
    ///   negative position.
    public func updatePlayback(episode id: Int64, _ update: PlaybackUpdate) async throws -> Playback {
        try await send(.PUT, "/v1/episodes/\(id)/playback", body: update)
    }

    /// Saves where the listener is in a song (by its catalog track id).
    public func updatePlayback(track id: Int64, _ update: PlaybackUpdate) async throws -> Playback {
        try await send(.PUT, "/v1/tracks/\(id)/playback", body: update)
    }

    /// An episode's chapters, fetched by the daemon from the podcast's host.
    public func chapters(episode id: Int64) async throws -> [Chapter] {
        let list: ChapterList = try await send(.GET, "/v1/episodes/\(id)/chapters")
        return list.chapters
    }

    /// An episode's transcript, fetched by the daemon, as plain text lines.
    public func transcript(episode id: Int64) async throws -> [TranscriptCue] {
        let transcript: Transcript = try await send(.GET, "/v1/episodes/\(id)/transcript")
        return transcript.cues
    }

    /// Where the listener's podcasts said the words (all of them; "quoted phrases" whole), best
    /// first, each hit with its episode and second.
    public func searchTranscripts(_ words: String, podcast: Int64? = nil, limit: Int? = nil) async throws -> TranscriptSearch {
        var query = ["q=\(Self.escape(words))"]
        if let podcast { query.append("podcast=\(podcast)") }
        if let limit { query.append("limit=\(limit)") }
        return try await send(.GET, "/v1/transcripts/search?" + query.joined(separator: "&"))
    }

    /// Marks every episode of a podcast played.
    public func markPlayed(podcast id: Int64) async throws -> PodcastDetail {
        try await send(.POST, "/v1/podcasts/\(id)/played")
    }

    /// Deletes a downloaded episode's file; the episode stays, to be downloaded again or streamed.
    public func deleteEpisodeFile(_ id: Int64) async throws -> Episode {
        try await send(.DELETE, "/v1/episodes/\(id)/file")
    }

    /// The listener's Up Next, in order.
    public func upNext() async throws -> UpNext {
        try await send(.GET, "/v1/up-next")
    }

    /// Replaces Up Next with these episodes and songs, in this order.
    public func setUpNext(_ items: [UpNextEntry]) async throws -> UpNext {
        try await send(.PUT, "/v1/up-next", body: UpNextOrder(items: items))
    }

    /// Downloads an episode's media file into its podcast's folder.
    /// - Parameters:
    ///   - id: the ``Episode/id``.
    ///   - session: the session the transfer belongs to.
    /// - Returns: the episode's transfer.
    public func downloadEpisode(_ id: Int64, session: String) async throws -> Transfer {
        try await send(.POST, "/v1/episodes/\(id)/download", body: EpisodeDownloadRequest(session: session))
    }

    /// Subscribes to every feed an OPML file names; one bad feed does not stop the others.
    /// - Parameter data: the OPML document.
    /// - Returns: the podcasts now subscribed, and the feeds that failed.
    /// - Throws: ``FerryError`` `opml_invalid` when the file cannot be read.
    public func importOPML(_ data: Data) async throws -> ImportResponse {
        var request = request(.POST, "/v1/podcasts/import")
        request.headers.add(name: "Content-Type", value: "text/x-opml")
        request.body = .bytes(ByteBuffer(bytes: data))
        return try await decode(request, timeout: .seconds(600))
    }

    /// Every subscription as an OPML document, for another podcast app.
    public func exportOPML() async throws -> String {
        let request = request(.GET, "/v1/podcasts/export")
        let response = try await http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 16 << 20)
        guard response.status == .ok else { throw Self.error(status: response.status, body: body) }
        return String(buffer: body)
    }

    /// A one-time link that logs a browser into the web app (valid a few minutes).
    /// - Parameter user: an account to sign in with the link (nil: the machine's owner).
    public func loginLink(user: String? = nil) async throws -> LoginLink {
        guard let user else { return try await send(.POST, "/v1/login-links") }
        return try await send(.POST, "/v1/login-links", body: LoginLinkRequest(user: user))
    }

    static func query(_ items: [URLQueryItem]) -> String {
        var components = URLComponents()
        components.queryItems = items
        // URLComponents leaves '+' alone, which servers read as a space.
        return (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
    }
}
