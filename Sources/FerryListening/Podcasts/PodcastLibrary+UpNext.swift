import FerryCore
import FerryKit
import Foundation

/// Up Next as the web app shows it: each entry with its title, artwork, place and where it plays from.
extension PodcastLibrary {
    package func upNext() async throws -> UpNext {
        UpNext(items: try await items(try await store.upNextEntries(listener)))
    }

    /// The entries of Up Next or a playlist as the web app shows and plays them; those gone
    /// since are left out.
    func items(_ entries: [UpNextEntry]) async throws -> [UpNextItem] {
        let episodeIds = entries.filter { $0.kind == .episode }.map(\.id)
        let trackIds = entries.filter { $0.kind == .track }.map(\.id)
        let episodePlaybacks = try await store.playbacks(listener, .episode, ids: episodeIds)
        let trackPlaybacks = try await store.playbacks(listener, .track, ids: trackIds)
        let tracks = try await store.tracks(ids: trackIds)
        var podcasts: [Int64: PodcastRecord] = [:]
        let speeds = Dictionary(uniqueKeysWithValues: try await store.subscriptions(of: listener).map { ($0.podcast.podcastId, $0.subscription.playbackSpeed) })
        var items: [UpNextItem] = []
        for entry in entries {
            switch entry.kind {
            case .episode:
                guard let record = try await store.episode(id: entry.id) else { continue }
                if podcasts[record.podcastId] == nil { podcasts[record.podcastId] = try await store.podcast(id: record.podcastId) }
                let podcast = podcasts[record.podcastId]
                items.append(UpNextItem(
                    kind: .episode, id: entry.id, title: record.readableTitle, subtitle: podcast?.title,
                    artworkURL: record.artworkURL ?? podcast?.artworkURL, durationSeconds: record.duration,
                    playURL: await playURL(record), playback: episodePlaybacks[entry.id], podcastId: record.podcastId,
                    playbackSpeed: speeds[record.podcastId] ?? nil
                ))
            case .track:
                guard let track = tracks[entry.id] else { continue }
                let transfer = await track.transferId.asyncFlatMap { try? await engine.transfer($0) }
                let downloaded = transfer.map { $0.state == .completed && FileManager.default.fileExists(atPath: $0.path ?? "") } ?? false
                items.append(UpNextItem(
                    kind: .track, id: entry.id, title: track.title, subtitle: track.artist, artworkURL: track.artworkURL,
                    durationSeconds: track.durationSeconds,
                    playURL: downloaded ? transfer.map { "/v1/transfers/\($0.id)/file" } : nil, playback: trackPlaybacks[entry.id]
                ))
            }
        }
        return items
    }

    /// Replaces Up Next (see ``ListeningStore/setUpNext(_:)``) and reads it back.
    package func setUpNext(_ order: UpNextOrder) async throws -> UpNext {
        try await store.setUpNext(listener, order.items)
        return try await upNext()
    }
}

extension Optional {
    func asyncFlatMap<T>(_ transform: (Wrapped) async throws -> T?) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
