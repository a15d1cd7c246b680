import Logging
import ServiceLifecycle

/// Keeps subscriptions fresh: restores subscriptions found on disk at start, then refreshes
/// every feed on a schedule (hourly by default) until shutdown.
public struct PodcastRefresher: Service {
    let podcasts: PodcastLibrary
    let interval: Duration
    let clock: any Clock<Duration>
    let logger: Logger
    /// Subscribes to what phones added and could not be fetched yet (``SyncLibrary/subscribePending()``).
    let sync: SyncLibrary?

    /// - Parameters:
    ///   - interval: time between refreshes of all feeds.
    ///   - clock: drives the schedule; tests pass a manual clock.
    public init(
        podcasts: PodcastLibrary, sync: SyncLibrary? = nil, interval: Duration = .seconds(3600), clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger
    ) {
        self.podcasts = podcasts
        self.sync = sync
        self.interval = interval
        self.clock = clock
        self.logger = logger
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            await podcasts.restoreFromDisk()
            await sync?.subscribePending()
            while !Task.isCancelled {
                try await clock.sleep(for: interval, tolerance: nil)
                await sync?.subscribePending()
                let errors = await podcasts.refreshAll()
                logger.info("refreshed podcasts", metadata: ["podcast.failures": "\(errors.count)"])
            }
        }
    }
}
