import AsyncHTTPClient
import FerryCore
import FerryFeeds
import FerryKit
import Foundation
import Logging

/// Podcast subscriptions: subscribe (feed URL, catalog result, Apple Podcasts page), refresh
/// with conditional GETs, episode downloads through the transfer engine into
/// `Podcasts/<title>/`, auto-download of the newest episodes, retention, OPML.
///
/// The household has one library; each value of this type acts for one ``listener`` (``as(_:)``):
/// their subscriptions, places, Up Next and speeds. Podcasts, episodes and files are shared: a
/// podcast leaves the library when its last subscriber leaves it.
///
/// Each podcast folder holds a small `.ferry-podcast.json` naming its feed, so subscriptions and
/// downloaded episodes can be rebuilt from disk if the journal is lost.
package struct PodcastLibrary: Sendable {
    /// The session auto-downloads belong to.
    package static let autoDownloadSession = "podcasts"
    static let sidecarName = ".ferry-podcast.json"

    let engine: TransferEngine
    let catalog: CatalogClient?
    let fetcher: FeedFetcher
    /// For an episode's chapters and transcript, and its media streamed: smaller and sooner.
    let sidecars: FeedFetcher
    let logger: Logger
    /// Where subscriptions, episodes, playback and Up Next are kept.
    package let store: any ListeningStore
    /// Whose subscriptions and places this value reads and changes (``Listener/owner``: the machine's own user).
    package private(set) var listener = Listener.owner
    /// Episodes the feed stopped listing are forgotten this many days later unless something
    /// names them (a download, a file, a listener's place or play, Up Next); nil: never. Feeds
    /// list their newest tens or hundreds: without this, a year of daily shows leaves tens of
    /// thousands of episodes nobody will see again.
    package var goneEpisodeDays: Int? = Self.defaultGoneEpisodeDays
    package static let defaultGoneEpisodeDays = 30
    var library: LibraryFolder { engine.library }
    /// Nudged when episodes arrive, for ``TranscriptIndexer``.
    package let transcriptsWaiting = WorkSignal()
    /// The Podping announcements heard (``ping(_:)``), which shape the refresh schedule.
    package let podpings = Podpings()

    /// - Parameter store: the listening store; nil: the engine's own SQLite journal.
    package init(engine: TransferEngine, catalog: CatalogClient?, store: (any ListeningStore)? = nil, logger: Logger) {
        self.engine = engine
        self.store = store ?? SQLiteListeningStore(engine.local)
        self.catalog = catalog
        self.logger = logger
        fetcher = FeedFetcher(
            clients: engine.clients, redirects: engine.configuration.redirects, userAgent: engine.configuration.userAgent,
            maximumBytes: 64 << 20, timeout: .seconds(60), logger: logger
        )
        sidecars = FeedFetcher(
            clients: engine.clients, redirects: engine.configuration.redirects, userAgent: engine.configuration.userAgent,
            maximumBytes: 2 << 20, timeout: .seconds(30), logger: logger
        )
    }

    /// The same library, acting for `listener`.
    package func `as`(_ listener: String) -> PodcastLibrary {
        var library = self
        library.listener = listener
        return library
    }

    // MARK: Subscribing

    /// Subscribes to a feed URL, an Apple Podcasts page URL (`…/id123456789`) or a catalog id
    /// given as text; fetches the feed at once.
    /// - Parameter credentials: a private feed's user name and password (else those in the URL).
    /// - Throws: `feed_credentials` when the feed needs credentials it did not get, or refuses
    ///   them; nothing is recorded then.
    package func subscribe(_ text: String, catalogId: Int64? = nil, credentials: FeedCredentials? = nil) async throws -> PodcastDetail {
        try credentials?.validate()
        if let id = catalogId ?? ApplePodcastsURL.id(from: text) ?? Int64(text.trimmingWhitespace()) {
            return try await subscribe(catalogId: id)
        }
        let (url, inURL) = try FeedCredentials.split(try TransferURL.validate(text))
        return try await subscribe(feedURL: url, catalogId: nil, credentials: credentials ?? inURL)
    }

    /// Subscribes to the feed of a catalog podcast.
    package func subscribe(catalogId: Int64) async throws -> PodcastDetail {
        guard let catalog else { throw FerryError(.invalidRequest, "The catalog is not available in this daemon.") }
        guard let item = try await catalog.lookup(id: catalogId) else {
            throw FerryError(.notFound, "The catalog has no podcast with id \(catalogId).")
        }
        guard let feedURL = item.feedURL else {
            throw FerryError(.notFound, "The catalog entry \(catalogId) (\(item.trackName ?? item.collectionName ?? "?")) has no feed URL.")
        }
        return try await subscribe(feedURL: feedURL, catalogId: catalogId)
    }

    package func subscribe(feedURL: URL, catalogId: Int64?, credentials: FeedCredentials? = nil) async throws -> PodcastDetail {
        // A podcast another listener brought into the library is theirs at once, unless new
        // credentials come with it (they are tried first).
        if credentials == nil, let known = try await store.podcast(feedURL: feedURL.absoluteString) {
            try await store.subscribe(listener, podcastId: known.podcastId)
            return try await detail(known.podcastId)
        }
        // In two steps so that the document and the parsed feed are freed before the detail is
        // read: for a 20,000-episode feed they are 70 MiB (bench/reports/2026-11-feeds.md,
        // "A long feed in the daemon").
        let id = try await fetchAndRecord(feedURL: feedURL, catalogId: catalogId, credentials: credentials)
        try await store.subscribe(listener, podcastId: id)
        return try await detail(id)
    }

    /// Fetches and parses the feed, and records the podcast with its episodes in the library.
    /// - Returns: the podcast's id (an existing one's when it was in the library already).
    private func fetchAndRecord(feedURL: URL, catalogId: Int64?, credentials: FeedCredentials?) async throws -> Int64 {
        let (result, movedTo) = try await fetcher.fetch(feedURL, etag: nil, lastModified: nil, credentials: credentials)
        guard case .fetched(let data, let etag, let lastModified) = result else {
            throw FerryError(.feedUnavailable, "The feed at \(feedURL.absoluteString) answered 304 to a first request.")
        }
        let url = movedTo ?? feedURL
        let feed = try FeedParser.parse(data, url: url)
        let finalURL = feed.newFeedURL ?? url
        let title = feed.title.isEmpty ? (finalURL.host ?? "Podcast") : feed.title
        var draft = PodcastRecord(feedURL: finalURL.absoluteString, title: title, folder: Self.folder(for: title), catalogId: catalogId)
        draft.update(from: feed)
        draft.etag = etag
        draft.lastModified = lastModified
        draft.refreshedAt = Date()
        draft.credentials = credentials
        let (record, inserted) = try await store.insertPodcast(draft)
        if !inserted, let credentials, credentials != record.credentials {
            // Subscribing again with other credentials replaces the old ones (they worked just now).
            try await store.updatePodcast(id: record.podcastId) { $0.credentials = credentials }
        }
        if inserted {
            _ = try await store.mergeEpisodes(podcastId: record.podcastId, feed.episodes, markNew: false, now: engine.configuration.now())
            transcriptsWaiting.signal()
            writeSidecar(record)
            try await adoptFilesOnDisk(record.podcastId)
            logger.info("subscribed", metadata: ["podcast.id": "\(record.podcastId)", "podcast.feed": "\(record.feedURL)"])
        }
        return record.podcastId
    }

    /// Ends the listener's subscription. The last subscriber's takes the podcast out of the
    /// library (its files too with `deleteFiles`); while others are subscribed, nothing else changes.
    package func unsubscribe(_ id: Int64, deleteFiles: Bool) async throws {
        guard let record = try await store.podcast(id: id) else {
            throw FerryError(.notFound, "There is no podcast \(id). `ferry podcast ls` lists them.")
        }
        guard try await store.unsubscribe(listener, podcastId: id) == 0 else { return }
        try await store.deletePodcast(id: id)
        let folder = library.absolute(record.folder)
        if deleteFiles, library.contains(folder) {
            try? FileManager.default.removeItem(at: folder)
        } else {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(Self.sidecarName))
        }
    }

    // MARK: Refreshing

    /// Fetches the feed again (conditional GET), records new episodes, follows a moved feed,
    /// auto-downloads the newest episodes if set, and applies retention. In a cluster, waits
    /// while another member refreshes this podcast.
    /// - Returns: the episodes that are new.
    @discardableResult
    package func refresh(_ id: Int64) async throws -> [EpisodeRecord] {
        try await store.refreshingPodcast(id) { try await fetchAndMerge(id) }
    }

    private func fetchAndMerge(_ id: Int64) async throws -> [EpisodeRecord] {
        guard let record = try await store.podcast(id: id) else {
            throw FerryError(.notFound, "There is no podcast \(id). `ferry podcast ls` lists them.")
        }
        do {
            let (result, movedTo) = try await fetcher.fetch(
                URL(string: record.feedURL)!, etag: record.etag, lastModified: record.lastModified, credentials: record.credentials
            )
            var added: [EpisodeRecord] = []
            var newFeedURL = movedTo
            if case .fetched(let data, let etag, let lastModified) = result {
                let feed = try FeedParser.parse(data, url: movedTo ?? URL(string: record.feedURL))
                newFeedURL = feed.newFeedURL ?? newFeedURL
                added = try await store.mergeEpisodes(podcastId: id, feed.episodes, markNew: true, now: engine.configuration.now())
                if added.contains(where: { $0.transcriptURL != nil }) { transcriptsWaiting.signal() }
                try await store.updatePodcast(id: id) { podcast in
                    podcast.update(from: feed)
                    podcast.etag = etag
                    podcast.lastModified = lastModified
                }
            }
            let moved = newFeedURL.map(\.absoluteString).flatMap { $0 == record.feedURL ? nil : $0 }
            try await store.updatePodcast(id: id) { podcast in
                podcast.refreshedAt = Date()
                podcast.error = nil
                if let moved {
                    podcast.feedURL = moved
                    // Validators belong to the old URL.
                    podcast.etag = nil
                    podcast.lastModified = nil
                }
            }
            if let moved {
                logger.info("feed moved", metadata: ["podcast.id": "\(id)", "podcast.feed": "\(moved)"])
                if let updated = try await store.podcast(id: id) { writeSidecar(updated) }
            }
            try await downloadNewest(id)
            try await applyRetention(id)
            if let days = goneEpisodeDays {
                let forgotten = try await store.forgetGoneEpisodes(podcastId: id, goneBefore: engine.configuration.now() - Double(days) * 86_400)
                if forgotten > 0 { logger.debug("episodes gone from the feed forgotten", metadata: ["podcast.id": "\(id)", "episodes": "\(forgotten)"]) }
            }
            return added
        } catch let error as FerryError {
            _ = try? await store.updatePodcast(id: id) { podcast in
                podcast.refreshedAt = Date()
                podcast.error = error.info
            }
            throw error
        }
    }

    /// Refreshes every podcast of the library; one broken feed does not stop the others.
    /// - Returns: how many podcasts were refreshed, the episodes that refreshing added (in a
    ///   cluster, not those another member's refresh added meanwhile), and the errors by podcast id.
    package func refreshAll() async -> (refreshed: Int, added: Int, errors: [Int64: FerryError]) {
        var errors: [Int64: FerryError] = [:]
        var (refreshed, added) = (0, 0)
        for podcast in (try? await store.podcasts()) ?? [] {
            do {
                added += try await refresh(podcast.podcastId).count
                refreshed += 1
            } catch {
                errors[podcast.podcastId] = error as? FerryError ?? FerryError(.feedUnavailable, "\(error)")
                logger.warning("refresh failed", metadata: ["podcast.id": "\(podcast.podcastId)", "error": "\(error)"])
            }
        }
        return (refreshed, added, errors)
    }

    // MARK: Settings

    /// The listener's wishes for their subscription, and the podcast's refresh interval (the
    /// household's: the feed is fetched once for all).
    /// - Parameters:
    ///   - autoDownload: download the newest N episodes by themselves (0 to stop).
    ///   - keepLatest: keep only the newest N downloaded episodes (0 to keep all).
    ///   - playbackSpeed: the player's speed for it, 0.5–3 (0 clears it).
    ///   - oldestFirst: list its episodes oldest first (a serial).
    ///   - refreshMinutes: minutes between fetches of its feed, 15–10,080 (0: the daemon's interval).
    ///   - enclosureChoice: which file its downloads take when an episode offers several.
    package func update(
        _ id: Int64, autoDownload: Int?, keepLatest: Int?, playbackSpeed: Double? = nil, oldestFirst: Bool? = nil, refreshMinutes: Int? = nil,
        enclosureChoice: EnclosureChoice? = nil
    ) async throws -> PodcastDetail {
        if let refreshMinutes, refreshMinutes != 0, !(15...10_080).contains(refreshMinutes) {
            throw FerryError.invalidRequest("refreshMinutes must be between 15 and 10080 (a week); 0 goes back to the daemon's interval.")
        }
        if let playbackSpeed, playbackSpeed != 0, !(playbackSpeed.isFinite && (0.5...3).contains(playbackSpeed)) {
            throw FerryError.invalidRequest("playbackSpeed must be between 0.5 and 3 (0 goes back to the player's own).")
        }
        if let autoDownload, !(0...1000).contains(autoDownload) {
            throw FerryError.invalidRequest("autoDownload must be between 0 and 1000.")
        }
        if let keepLatest, !(0...100_000).contains(keepLatest) {
            throw FerryError.invalidRequest("keepLatest must be between 0 and 100000 (0 keeps everything).")
        }
        try await store.updateSubscription(listener, podcastId: id) { subscription in
            if let autoDownload { subscription.autoDownload = autoDownload }
            if let keepLatest { subscription.keepLatest = keepLatest == 0 ? nil : keepLatest }
            if let playbackSpeed { subscription.playbackSpeed = playbackSpeed == 0 ? nil : playbackSpeed }
            if let oldestFirst { subscription.oldestFirst = oldestFirst }
        }
        if refreshMinutes != nil || enclosureChoice != nil {
            try await store.updatePodcast(id: id) { podcast in
                if let refreshMinutes { podcast.refreshMinutes = refreshMinutes == 0 ? nil : refreshMinutes }
                if let enclosureChoice { podcast.enclosureChoice = enclosureChoice == .feed ? nil : enclosureChoice }
            }
        }
        try await downloadNewest(id)
        try await applyRetention(id)
        return try await detail(id)
    }

    package func markSeen(_ id: Int64) async throws {
        try await store.markEpisodesSeen(podcastId: id)
    }

    // MARK: Downloads

    /// Downloads an episode into the podcast's folder, named after it; the same episode is never
    /// downloaded twice (an unfinished or finished transfer is returned, a failed one resumed).
    package func download(episode id: Int64, session: String) async throws -> Transfer {
        guard let episode = try await store.episode(id: id), let podcast = try await store.podcast(id: episode.podcastId) else {
            throw FerryError(.notFound, "There is no episode \(id).")
        }
        if let transferId = episode.transferId, let transfer = try? await engine.transfer(transferId) {
            switch transfer.state {
            case .queued, .running, .waiting, .completed, .paused: return transfer
            case .failed: return try await engine.resume(transferId)
            case .cancelled: break
            }
        }
        guard let sources = EpisodeSources(episode.fields, choice: podcast.enclosureChoice ?? .feed) else {
            throw FerryError(.invalidRequest, "Episode \(id) (\(episode.title)) has no audio or video file to download.")
        }
        let url = try TransferURL.validate(sources.url)
        if let note = sources.note { logger.notice("episode \(id): \(note)") }
        // The feed's other copies (podcast:alternateEnclosure sources), when valid URLs.
        let mirrors = sources.mirrors.compactMap { try? TransferURL.validate($0) }
        // A private feed's credentials go with its episodes on the same host, as the answer to
        // its challenge (Basic or Digest), and as every credential never to another origin.
        let sameHost = URL(string: podcast.feedURL)?.host?.lowercased() == url.host?.lowercased()
        let options = podcast.credentials.flatMap { sameHost ? TransferOptions(user: $0.user, password: $0.password) : nil }
        let transfer = try await engine.enqueue(
            .init(urls: [url], session: session, force: true, folder: podcast.folder, preferredName: episode.preferredFileName(sources),
                  taskDescription: "\(podcast.title): \(episode.title)", options: options, mirrors: mirrors,
                  checksum: sources.checksum)
        )[0]
        try await store.updateEpisode(id: id) { episode in
            episode.transferId = transfer.id
            episode.isNew = false
        }
        return transfer
    }

    private func downloadNewest(_ id: Int64) async throws {
        guard let podcast = try await store.podcast(id: id), podcast.autoDownload > 0 else { return }
        let newest = try await store.episodes(podcastId: id).filter { $0.enclosureURL != nil }.prefix(podcast.autoDownload)
        for episode in newest where episode.transferId == nil && episode.filePath == nil {
            _ = try await download(episode: episode.episodeId, session: Self.autoDownloadSession)
        }
    }

    /// Keeps the newest `keepLatest` downloaded episodes (the subscribers' union); older files
    /// are deleted and their transfers forgotten, except those a listener is in the middle of
    /// or has in Up Next.
    func applyRetention(_ id: Int64) async throws {
        guard let podcast = try await store.podcast(id: id), let keep = podcast.keepLatest else { return }
        let downloaded = try await episodes(of: podcast).filter { $0.state == .downloaded }
        let inUse = try await store.episodesInUse(podcastId: id)
        for episode in downloaded.dropFirst(keep) where !inUse.contains(episode.id) {
            try await deleteFile(of: episode)
        }
    }

    /// Deletes a downloaded episode's file (its transfer forgotten); the episode stays, to be
    /// downloaded again or streamed.
    /// - Throws: `not_found` for no such episode, or one without a file.
    package func deleteEpisodeFile(_ id: Int64) async throws -> Episode {
        guard let record = try await store.episode(id: id), let podcast = try await store.podcast(id: record.podcastId) else {
            throw FerryError(.notFound, "There is no episode \(id).")
        }
        guard let episode = try await episodes(of: podcast).first(where: { $0.id == id }), episode.state == .downloaded else {
            throw FerryError(.notFound, "Episode \(id) (\(record.readableTitle)) has no file to delete.")
        }
        try await deleteFile(of: episode)
        return try await episodes(of: podcast).first { $0.id == id } ?? episode
    }

    private func deleteFile(of episode: Episode) async throws {
        // The episode lets go of its transfer first: one it still named would only be hidden.
        try await store.updateEpisode(id: episode.id) { record in
            record.transferId = nil
            record.filePath = nil
        }
        if let transferId = episode.transfer?.id {
            try? await engine.remove(transferId, deleteFile: true)
        } else if let path = episode.path, library.contains(URL(fileURLWithPath: path)) {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    // MARK: Folders and recovery from disk

    /// `Podcasts/<title>`, sanitised.
    static func folder(for title: String) -> String {
        "Podcasts/" + (FileNamer.sanitize(title.replacingOccurrences(of: "/", with: "-")) ?? "Podcast")
    }

    private struct Sidecar: Codable {
        var feedURL: String
        var title: String
    }

    private func writeSidecar(_ podcast: PodcastRecord) {
        let folder = library.absolute(podcast.folder)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let data = try? FerryJSON.encoder(pretty: true).encode(Sidecar(feedURL: podcast.feedURL, title: podcast.title))
        try? data?.write(to: folder.appendingPathComponent(Self.sidecarName), options: .atomic)
    }

    /// Marks episodes whose file is already in the podcast's folder as downloaded.
    package func adoptFilesOnDisk(_ id: Int64) async throws {
        guard let podcast = try await store.podcast(id: id) else { return }
        let folder = library.absolute(podcast.folder)
        let names = Set((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        guard !names.isEmpty else { return }
        for episode in try await store.episodes(podcastId: id) where episode.transferId == nil && episode.filePath == nil {
            // Whichever of its files the podcast's choice took then.
            let candidates = EnclosureChoice.allCases.compactMap { EpisodeSources(episode.fields, choice: $0) }
                .map { FileNamer.name(preferred: episode.preferredFileName($0), contentType: nil, url: nil) }
            if let name = candidates.first(where: names.contains) {
                try await store.updateEpisode(id: episode.episodeId) { record in
                    record.filePath = "\(podcast.folder)/\(name)"
                    record.isNew = false
                }
            }
        }
    }

    /// Re-subscribes to podcasts whose folder is on disk but not in the journal (a lost
    /// journal), and marks the files found there as downloaded.
    package func restoreFromDisk() async {
        let root = library.absolute("Podcasts")
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for folder in folders {
            let sidecar = root.appendingPathComponent(folder).appendingPathComponent(Self.sidecarName)
            guard let data = FileManager.default.contents(atPath: sidecar.path),
                let saved = try? FerryJSON.decoder().decode(Sidecar.self, from: data),
                (try? await store.podcast(feedURL: saved.feedURL)) == .some(nil)
            else { continue }
            var draft = PodcastRecord(feedURL: saved.feedURL, title: saved.title, folder: "Podcasts/\(folder)")
            draft.refreshedAt = nil
            guard let (record, inserted) = try? await store.insertPodcast(draft), inserted else { continue }
            // The accounts went with the journal: the machine's owner has it again.
            _ = try? await store.subscribe(Listener.owner, podcastId: record.podcastId)
            logger.info("restored a subscription from disk", metadata: ["podcast.feed": "\(saved.feedURL)"])
            // Episodes come with the next refresh, which adopts the files on disk.
            if (try? await refresh(record.podcastId)) != nil {
                try? await adoptFilesOnDisk(record.podcastId)
            }
        }
    }
}

extension PodcastLibrary {
    /// Subscribes to every feed of an OPML file; feeds already subscribed are kept, broken ones
    /// reported without stopping the rest.
    package func importOPML(_ data: Data) async throws -> ImportResponse {
        let outlines = try OPML.parse(data)
        var subscribed: [Podcast] = []
        var failures: [ImportResponse.Failure] = []
        for outline in outlines {
            do {
                subscribed.append(try await subscribe(feedURL: outline.xmlURL, catalogId: nil).podcast)
            } catch {
                let failure = error as? FerryError ?? FerryError(.feedUnavailable, "\(error)")
                failures.append(.init(url: outline.xmlURL.absoluteString, error: failure.info))
            }
        }
        return ImportResponse(subscribed: subscribed, failures: failures)
    }

    /// The listener's subscriptions as OPML 2.0.
    package func exportOPML() async throws -> String {
        let outlines = try await store.subscriptions(of: listener).map(\.podcast).compactMap { podcast in
            URL(string: podcast.feedURL).map { OPML.Outline(title: podcast.title, xmlURL: $0, htmlURL: podcast.link.flatMap(URL.init(string:))) }
        }
        return OPML.export(outlines, title: "Ferry podcast subscriptions")
    }
}
