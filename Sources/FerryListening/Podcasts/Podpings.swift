import FerryCore
import FerryKit
import Foundation
import Synchronization

/// What the daemon hears of Podping, the network on which publishers announce that a feed
/// changed: a relay the user runs (a Hive watcher) passes the announcements on to
/// `POST /v1/podcasts/ping`. A pinged feed is fetched at once (once a minute at most); while
/// pings are heard, a feed that says it announces (`podcast:podping usesPodping="true"`) is
/// polled only as a safety net (``RefreshSchedule``). Kept in memory: after a restart the
/// daemon polls as usual until it hears a ping again.
package final class Podpings: Sendable {
    /// Pings heard this recently mean the relay is running.
    static let listening: TimeInterval = 86_400
    /// A feed pinged again this soon after its fetch is not fetched again.
    static let again: TimeInterval = 60

    private struct State {
        var lastHeard: Date?
        var fetched: [String: Date] = [:]
    }
    private let state = Mutex(State())

    package init() {}

    /// Whether a relay has passed a ping on within a day of `now`.
    package func isListening(now: Date) -> Bool {
        state.withLock { $0.lastHeard.map { now.timeIntervalSince($0) < Self.listening } ?? false }
    }

    /// Records a ping of `feed`; true when it is to be fetched (not fetched for it within a minute).
    func heard(_ feed: String, now: Date) -> Bool {
        state.withLock { state in
            state.lastHeard = now
            if let last = state.fetched[feed], now.timeIntervalSince(last) < Self.again { return false }
            state.fetched = state.fetched.filter { now.timeIntervalSince($0.value) < Self.again }
            state.fetched[feed] = now
            return true
        }
    }
}

extension PodcastLibrary {
    /// Fetches at once the feeds a ping names that are in the library.
    /// - Throws: `invalid_request` for no URL or more than ``FeedPing/limit``.
    package func ping(_ urls: [String]) async throws -> FeedPingResponse {
        var feeds: [String] = []
        for url in urls.map({ String($0.trimmingWhitespace()) }) where !url.isEmpty && !feeds.contains(url) { feeds.append(url) }
        guard !feeds.isEmpty else { throw FerryError.invalidRequest("Name the feeds that changed: {\"urls\": [\"https://…/feed.xml\"]} or ?url=…") }
        guard feeds.count <= FeedPing.limit else { throw FerryError.invalidRequest("A ping names at most \(FeedPing.limit) feeds.") }
        var response = FeedPingResponse()
        for feed in feeds {
            guard let podcast = try await store.podcast(feedURL: feed) else {
                response.unknown.append(feed)
                continue
            }
            guard podpings.heard(feed, now: engine.configuration.now()) else {
                response.skipped.append(podcast.podcastId)
                continue
            }
            do {
                try await refresh(podcast.podcastId)
                response.refreshed.append(podcast.podcastId)
            } catch {
                let reason = error as? FerryError ?? FerryError(.feedUnavailable, "\(error)")
                response.failures.append(.init(podcastId: podcast.podcastId, error: reason.info))
            }
        }
        return response
    }
}
