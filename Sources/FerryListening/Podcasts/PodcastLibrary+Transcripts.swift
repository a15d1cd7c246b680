import FerryCore
import FerryKit
import Foundation

/// Searching what was said: each episode's transcript is fetched and indexed once (by
/// ``TranscriptIndexer``, and whenever the web app fetches one to show), then searched across
/// the listener's podcasts.
extension PodcastLibrary {
    /// The lines of the listener's podcasts that have all the words and "phrases" of `text`,
    /// best first, each with its episode and second.
    /// - Throws: `invalid_request` for a search without a word, or too long.
    package func searchTranscripts(_ text: String, podcastId: Int64? = nil, limit: Int = 50) async throws -> TranscriptSearch {
        let query = try TranscriptQuery(text)
        let lines = try await store.searchTranscripts(listener, query, podcastId: podcastId, limit: min(max(limit, 1), TranscriptSearch.maximumHits))
        var episodes: [Int64: EpisodeRecord] = [:]
        var podcasts: [Int64: PodcastRecord] = [:]
        var playURLs: [Int64: String?] = [:]
        var hits: [TranscriptHit] = []
        for line in lines {
            if episodes[line.episodeId] == nil { episodes[line.episodeId] = try await store.episode(id: line.episodeId) }
            guard let episode = episodes[line.episodeId] else { continue }
            if podcasts[episode.podcastId] == nil { podcasts[episode.podcastId] = try await store.podcast(id: episode.podcastId) }
            guard let podcast = podcasts[episode.podcastId] else { continue }
            if playURLs[line.episodeId] == nil { playURLs[line.episodeId] = await playURL(episode) }
            hits.append(TranscriptHit(
                episodeId: line.episodeId, episodeTitle: episode.readableTitle, podcastId: podcast.podcastId, podcastTitle: podcast.title,
                artworkURL: episode.artworkURL ?? podcast.artworkURL, published: episode.published, seconds: line.seconds, speaker: line.speaker,
                playURL: playURLs[line.episodeId] ?? nil, snippet: query.snippet(line.text)
            ))
        }
        return TranscriptSearch(query: text, hits: hits, index: try await store.transcriptIndexStatus(listener))
    }

    /// Fetches and indexes the transcripts waiting for it, `parallel` at a time, up to `limit`.
    /// A transcript that cannot be had or read is kept with its reason and tried again a day
    /// later (at most ``TranscriptLine/maximumAttempts`` times); its episode plays as before.
    /// - Returns: how many were claimed (0: nothing waits).
    package func indexTranscripts(limit: Int = 32, parallel: Int = 4) async throws -> Int {
        let now = engine.configuration.now()
        let claimed = try await store.claimTranscripts(
            limit: limit, now: now, claimedBefore: now - 600, retryBefore: now - 86_400
        )
        await withTaskGroup(of: Void.self) { group in
            var next = claimed.makeIterator()
            func start() {
                guard let episode = next.next() else { return }
                group.addTask { await indexTranscript(episodeId: episode.episodeId, url: episode.url) }
            }
            for _ in 0..<parallel { start() }
            while await group.next() != nil { start() }
        }
        return claimed.count
    }

    private func indexTranscript(episodeId: Int64, url: String) async {
        do {
            // Indexed under the URL fetched: if the feed named another since the claim, the next claim fetches that.
            let fetched = try await sidecar(episode: episodeId, "transcript", \.transcriptURL)
            let cues = try EpisodeSidecars.transcript(from: fetched.data)
            try await store.indexTranscript(episodeId: episodeId, url: fetched.url, cues: TranscriptPassages.of(cues), now: engine.configuration.now())
        } catch {
            let reason = error as? FerryError ?? FerryError(.feedUnavailable, "\(error)")
            logger.info("transcript not indexed", metadata: ["episode.id": "\(episodeId)", "error": "\(reason.message)"])
            try? await store.transcriptFailed(episodeId: episodeId, url: url, error: reason, now: engine.configuration.now())
        }
    }
}
