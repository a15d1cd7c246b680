import FerryCore
import FerryFeeds
import Foundation
import Logging
import ServiceLifecycle

/// Keeps subscriptions fresh: restores subscriptions found on disk at start, then fetches each
/// feed when its turn comes (``RefreshSchedule``: its own interval, else hourly by default)
/// until shutdown.
package struct PodcastRefresher: Service {
    let podcasts: PodcastLibrary
    let interval: Duration
    let clock: any Clock<Duration>
    let logger: Logger
    /// Subscribes to what phones added and could not be fetched yet (``SyncLibrary/subscribePending()``).
    let sync: SyncLibrary?

    /// - Parameters:
    ///   - interval: time between refreshes of a feed without its own.
    ///   - clock: drives the waits; tests pass a manual clock.
    package init(
        podcasts: PodcastLibrary, sync: SyncLibrary? = nil, interval: Duration = .seconds(3600), clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger
    ) {
        self.podcasts = podcasts
        self.sync = sync
        self.interval = interval
        self.clock = clock
        self.logger = logger
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            await podcasts.restoreFromDisk()
            while !Task.isCancelled {
                let next = await refreshTurn()
                try await clock.sleep(for: .seconds(max(60, next.timeIntervalSinceNow)), tolerance: .seconds(1))
            }
        }
    }

    /// Subscribes to what phones added and refreshes what is due, unless another member of a
    /// cluster is doing so (then it looks again in a minute). - Returns: when to look again.
    func refreshTurn(now: Date = Date()) async -> Date {
        do {
            let next = try await podcasts.store.duringRefreshTurn {
                await sync?.subscribePending()
                return await refreshDue(now: now)
            }
            return next ?? now
        } catch {
            logger.warning("refresh turn failed", metadata: ["error": "\(error)"])
            return now
        }
    }

    /// Refreshes the feeds whose turn has come at `now`. - Returns: when the next one is due.
    @discardableResult
    package func refreshDue(now: Date = Date()) async -> Date {
        let hearsPings = podcasts.podpings.isListening(now: now)
        let feeds = ((try? await podcasts.store.podcasts()) ?? []).map {
            RefreshSchedule.Feed(
                id: $0.podcastId, refreshedAt: $0.refreshedAt, minutes: $0.refreshMinutes,
                publishing: $0.podcasting?.updateFrequency.flatMap(PublishingSchedule.init),
                announced: hearsPings && $0.podcasting?.usesPodping == true)
        }
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        let (due, next) = RefreshSchedule.due(feeds, defaultInterval: seconds, now: now)
        var failures = 0
        for id in due {
            do {
                try await podcasts.refresh(id)
            } catch {
                failures += 1
                logger.warning("refresh failed", metadata: ["podcast.id": "\(id)", "error": "\(error)"])
            }
        }
        if !due.isEmpty { logger.info("refreshed podcasts", metadata: ["podcast.count": "\(due.count)", "podcast.failures": "\(failures)"]) }
        return next
    }
}
