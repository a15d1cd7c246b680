import AsyncHTTPClient
import FerryCore
import FerryFeeds
import FerryKit
import Foundation
import Logging

/// What the API shows of podcasts and episodes, joined with their transfers and the listener's
/// subscription and playback.
extension PodcastLibrary {
    /// The listener's subscriptions.
    package func podcasts() async throws -> [Podcast] {
        let counts = try await store.episodeCounts()
        return try await store.subscriptions(of: listener).map { record, subscription in
            let count = counts[record.podcastId] ?? (0, 0, 0)
            return model(record, subscription, total: count.total, new: count.new, downloaded: count.downloaded)
        }
    }

    /// Saves where the listener is in an episode or a song (see ``Playback/applying(_:now:)``).
    package func updatePlayback(_ media: PlaybackMedia, id: Int64, _ update: PlaybackUpdate) async throws -> Playback {
        try await store.updatePlayback(listener, media, id: id, update)
    }

    /// Where the listener is in an episode or a song; nil when nothing was saved (or there is no such one).
    package func playback(_ media: PlaybackMedia, id: Int64) async throws -> Playback? {
        try await store.playbacks(listener, media, ids: [id])[id]
    }

    /// Every episode of the podcast played ("mark all played"), for the listener.
    package func markPlayed(_ id: Int64) async throws -> PodcastDetail {
        _ = try await subscribed(id)
        try await store.markPlayed(listener, podcastId: id)
        return try await detail(id)
    }

    /// One of the listener's subscriptions, with its episodes.
    /// - Throws: `not_found` for no such podcast, or one the listener is not subscribed to.
    package func detail(_ id: Int64) async throws -> PodcastDetail {
        let (record, subscription) = try await subscribed(id)
        let listed = try await episodes(of: record)
        let episodes = subscription.oldestFirst ? listed.reversed() : listed
        let new = episodes.filter { $0.isNew && $0.state == .notDownloaded }.count
        let downloaded = episodes.filter { $0.state == .downloaded }.count
        return PodcastDetail(podcast: model(record, subscription, total: episodes.count, new: new, downloaded: downloaded), episodes: episodes)
    }

    func subscribed(_ id: Int64) async throws -> (PodcastRecord, Subscription) {
        guard let record = try await store.podcast(id: id) else {
            throw FerryError(.notFound, "There is no podcast \(id). `ferry podcast ls` lists them.")
        }
        guard let subscription = try await store.subscription(listener, podcastId: id) else {
            throw FerryError(.notFound, "You are not subscribed to podcast \(id) (\(record.title)). `ferry podcast ls` lists your subscriptions.")
        }
        return (record, subscription)
    }

    /// Where an episode's download stands, and its file when it has one: its transfer's, or one
    /// found in the podcast's folder without a transfer.
    func standing(_ record: EpisodeRecord, _ transfer: Transfer?) -> (EpisodeState, String?) {
        switch transfer?.state {
        case .queued?, .running?, .waiting?: return (.downloading, nil)
        case .paused?: return (.paused, nil)
        case .failed?: return (.failed, nil)
        case .completed?:
            if let file = transfer?.path, FileManager.default.fileExists(atPath: file) { return (.downloaded, file) }
        case .cancelled?, nil: break
        }
        if let relative = record.filePath {
            let file = library.absolutePath(relative)
            if FileManager.default.fileExists(atPath: file) { return (.downloaded, file) }
        }
        return (.notDownloaded, nil)
    }

    /// Where the web app plays an episode from: its downloaded file, else (with media) its stream.
    func playURL(_ record: EpisodeRecord) async -> String? {
        let transfer = await record.transferId.asyncFlatMap { try? await engine.transfer($0) }
        return switch standing(record, transfer).0 {
        case .downloaded: "/v1/episodes/\(record.episodeId)/file"
        default: record.enclosureURL == nil ? nil : "/v1/episodes/\(record.episodeId)/stream"
        }
    }

    /// An episode's chapters, fetched from the podcast's host now (at most 2 MiB).
    /// - Throws: `not_found` when the feed names none; `feed_unavailable`, `feed_too_large` or
    ///   `feed_invalid` when the file cannot be had or read (the episode still plays).
    package func chapters(episode id: Int64) async throws -> [Chapter] {
        try EpisodeSidecars.chapters(from: try await sidecar(episode: id, "chapters", \.chaptersURL).data)
    }

    /// An episode's transcript (WebVTT, SRT, Podcasting 2.0 JSON or HTML), fetched now, as plain text.
    /// - Throws: as ``chapters(episode:)``.
    package func transcript(episode id: Int64) async throws -> [TranscriptCue] {
        let (data, url) = try await sidecar(episode: id, "transcript", \.transcriptURL)
        let cues = try EpisodeSidecars.transcript(from: data)
        // What was fetched to be shown is indexed too (a newer file than the index's, maybe).
        try? await store.indexTranscript(episodeId: id, url: url, cues: TranscriptPassages.of(cues), now: engine.configuration.now())
        return cues
    }

    /// The file an episode's `link` names, and that URL (as the episode names it now).
    func sidecar(episode id: Int64, _ what: String, _ link: KeyPath<EpisodeRecord, String?>) async throws -> (data: Data, url: String) {
        guard let record = try await store.episode(id: id) else { throw FerryError(.notFound, "There is no episode \(id).") }
        guard let text = record[keyPath: link], let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
            throw FerryError(.notFound, "Episode \(id) has no \(what).")
        }
        let credentials = try await store.podcast(id: record.podcastId)?.credentials
        do {
            guard case .fetched(let data, _, _) = try await sidecars.fetch(url, etag: nil, lastModified: nil, credentials: credentials).result else {
                throw FerryError(.feedUnavailable, "The \(what) at \(url.absoluteString) answered 304 to a plain request.")
            }
            return (data, text)
        } catch let error as FerryError where error.code == .feedTooLarge {
            throw FerryError(.feedTooLarge, "The \(what) file at \(url.absoluteString) is larger than 2 MiB.")
        } catch let error as FerryError where error.code == .feedUnavailable || error.code == .feedCredentials {
            throw FerryError(error.code, error.message.replacingOccurrences(of: "the feed", with: "the \(what)").replacingOccurrences(of: "The feed", with: "The \(what)"))
        }
    }

    /// An episode's media from its host, for listening before (or while) it downloads: the
    /// player's `Range` goes to the host (redirects followed as for downloads, the feed's
    /// credentials only to its own host) and the answer's body comes back as it arrives.
    /// - Returns: the host's answer (200, 206 or 416); its body is the caller's to read.
    /// - Throws: `not_found` for no such episode, `invalid_request` for one without media,
    ///   `feed_unavailable` when the host cannot be reached or refuses.
    package func stream(episode id: Int64, range: String?) async throws -> HTTPClientResponse {
        guard let record = try await store.episode(id: id) else { throw FerryError(.notFound, "There is no episode \(id).") }
        guard let text = record.enclosureURL else {
            throw FerryError(.invalidRequest, "Episode \(id) (\(record.readableTitle)) has no audio or video to play.")
        }
        let start = try TransferURL.validate(text)
        let credentials = try await store.podcast(id: record.podcastId)?.credentials
        let (response, _, _) = try await sidecars.open(start, headers: range.map { [("Range", $0)] } ?? [], credentials: credentials) { error, at in
            FerryError(.feedUnavailable, "Could not reach the episode's host (\(at.host ?? "")): \(error.message)")
        }
        let status = Int(response.status.code)
        guard status == 200 || status == 206 || status == 416 else {
            _ = try? await response.body.collect(upTo: 64 << 10)
            throw FerryError(.feedUnavailable, "The episode's host answered \(status) \(response.status.reasonPhrase).")
        }
        return response
    }

    /// The file of a downloaded episode (for the web app's player).
    /// - Throws: `not_found` for no such episode, or one without a file.
    package func episodeFile(_ id: Int64) async throws -> String {
        guard let record = try await store.episode(id: id) else { throw FerryError(.notFound, "There is no episode \(id).") }
        var transfer: Transfer?
        if let transferId = record.transferId { transfer = try? await engine.transfer(transferId) }
        guard case (.downloaded, let path?) = standing(record, transfer) else {
            throw FerryError(.notFound, "Episode \(id) has no file: download it first.")
        }
        return path
    }

    func episodes(of podcast: PodcastRecord) async throws -> [Episode] {
        let records = try await store.episodes(podcastId: podcast.podcastId)
        let playbacks = try await store.playbacks(listener, podcastId: podcast.podcastId)
        var transfers: [Int64: Transfer] = [:]
        for id in records.compactMap(\.transferId) {
            transfers[id] = try? await engine.transfer(id)
        }
        return records.map { record in
            let transfer = record.transferId.flatMap { transfers[$0] }
            let (state, path) = standing(record, transfer)
            var fields = record.fields
            fields.title = record.readableTitle
            return Episode(
                id: record.episodeId, podcastId: record.podcastId, fields: fields, isNew: record.isNew, state: state, transfer: transfer,
                path: path, playback: playbacks[record.episodeId]
            )
        }
    }

    /// The podcast as the listener sees it: their own wishes for it.
    func model(_ record: PodcastRecord, _ subscription: Subscription, total: Int, new: Int, downloaded: Int) -> Podcast {
        Podcast(
            id: record.podcastId, feedURL: record.feedURL, title: record.title, author: record.author,
            descriptionText: record.descriptionText, descriptionHTML: record.descriptionHTML,
            artworkURL: record.artworkURL, link: record.link, folder: record.folder, autoDownload: subscription.autoDownload,
            keepLatest: subscription.keepLatest, episodeCount: total, newCount: new, downloadedCount: downloaded,
            refreshedAt: record.refreshedAt, error: record.error, user: record.username,
            playbackSpeed: subscription.playbackSpeed, oldestFirst: subscription.oldestFirst, refreshMinutes: record.refreshMinutes,
            enclosureChoice: record.enclosureChoice, podcasting: record.podcasting
        )
    }
}
