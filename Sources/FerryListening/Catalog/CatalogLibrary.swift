import FerryCore
import FerryKit
import Foundation

/// The catalog as the listener sees it: search results that know which songs' previews are
/// downloaded (the state lives with the transfer, not the result row) and which podcasts are
/// subscribed, and preview downloads into `Music/` named `Artist - Track.m4a`. Places and
/// subscriptions are the ``listener``'s (``as(_:)``).
package struct CatalogLibrary: Sendable {
    package let catalog: CatalogClient
    let engine: TransferEngine
    /// Where downloaded songs and their playback are kept.
    let store: any ListeningStore
    /// Whose places and subscriptions the results show.
    package private(set) var listener = Listener.owner

    /// - Parameter store: the listening store; nil: the engine's own SQLite journal.
    package init(catalog: CatalogClient, engine: TransferEngine, store: (any ListeningStore)? = nil) {
        self.catalog = catalog
        self.engine = engine
        self.store = store ?? SQLiteListeningStore(engine.local)
    }

    /// The same catalog, annotated for `listener`.
    package func `as`(_ listener: String) -> CatalogLibrary {
        var library = self
        library.listener = listener
        return library
    }

    /// Searches and annotates the results.
    /// - Parameter key: a later search with the same key cancels this one (type-ahead).
    package func search(_ query: CatalogQuery, replacing key: String?) async throws -> [CatalogResult] {
        try await annotate(try await catalog.search(query, replacing: key))
    }

    package func lookup(id: Int64) async throws -> CatalogResult {
        guard let item = try await catalog.lookup(id: id) else {
            throw FerryError(.notFound, "The catalog has nothing with id \(id).")
        }
        return try await annotate([item])[0]
    }

    /// Downloads a song's 30-second preview into `Music/`; the same song is not downloaded twice
    /// (its unfinished or finished transfer is returned, a failed one resumed), unless its file
    /// was deleted or moved: then it is downloaded again.
    package func downloadPreview(trackId: Int64, session: String) async throws -> Transfer {
        if let known = try await store.tracks(ids: [trackId])[trackId], let transferId = known.transferId,
            let transfer = try? await engine.transfer(transferId)
        {
            switch transfer.state {
            case .completed where transfer.fileMissing == true: break
            case .queued, .running, .waiting, .paused, .completed: return transfer
            case .failed: return try await engine.resume(transferId)
            case .cancelled: break
            }
        }
        guard let item = try await catalog.lookup(id: trackId), item.kind == .song || item.previewURL != nil else {
            throw FerryError(.notFound, "The catalog has no song with id \(trackId).")
        }
        guard let preview = item.previewURL else {
            throw FerryError(.notFound, "\(item.title) has no preview to download.")
        }
        let url = try TransferURL.validate(preview.absoluteString)
        let transfer = try await engine.enqueue(
            .init(urls: [url], session: session, force: true, folder: "Music", preferredName: Self.fileName(for: item),
                  taskDescription: [item.artistName, item.trackName].compactMap { $0 }.joined(separator: " – "))
        )[0]
        try await store.saveTrack(
            TrackRecord(
                trackId: trackId, transferId: transfer.id, title: item.title, artist: item.artistName,
                collection: item.collectionName, artworkURL: item.artworkURL?.absoluteString,
                previewURL: preview.absoluteString, durationSeconds: item.durationSeconds
            )
        )
        return transfer
    }

    /// `Artist - Track` (slashes in names become dashes, the sanitiser does the rest).
    static func fileName(for item: CatalogItem) -> String {
        let name = [item.artistName, item.trackName ?? item.collectionName].compactMap { $0 }.joined(separator: " - ")
        return (name.isEmpty ? "Preview \(item.id)" : name)
            .replacingOccurrences(of: "/", with: "-").replacingOccurrences(of: "\\", with: "-")
    }

    private func annotate(_ items: [CatalogItem]) async throws -> [CatalogResult] {
        let tracks = try await store.tracks(ids: items.compactMap(\.trackId))
        let playbacks = try await store.playbacks(listener, .track, ids: Array(tracks.keys))
        let podcasts = try await store.subscriptions(of: listener).map(\.podcast)
        var results: [CatalogResult] = []
        for item in items {
            var download: Transfer?
            if let trackId = item.trackId, let transferId = tracks[trackId]?.transferId {
                download = try? await engine.transfer(transferId)
            }
            let podcastId = item.kind == .podcast
                ? podcasts.first { ($0.catalogId != nil && $0.catalogId == item.collectionId) || $0.feedURL == item.feedURL?.absoluteString }?.id
                : nil
            results.append(
                CatalogResult(
                    id: item.trackId ?? item.collectionId ?? 0,
                    kind: CatalogResult.Kind(rawValue: item.kind.rawValue) ?? .other,
                    trackId: item.trackId, collectionId: item.collectionId, title: item.title, artist: item.artistName,
                    collection: item.collectionName, artworkURL: item.artworkURL?.absoluteString,
                    previewURL: item.previewURL?.absoluteString, feedURL: item.feedURL?.absoluteString,
                    durationSeconds: item.durationSeconds, releaseDate: item.releaseDate, genre: item.primaryGenre,
                    explicit: item.explicit, download: download, podcastId: podcastId,
                    playback: item.trackId.flatMap { playbacks[$0] }
                )
            )
        }
        return results
    }
}
