import FerryFeeds
import Foundation

/// When each feed is fetched again: its own interval (`refreshMinutes`), else the daemon's,
/// counted from its last fetch (a failed one too, so a broken feed is not hammered), shaped by
/// when the show says it publishes (``PublishingSchedule``) and whether it announces by Podping
/// (``Podpings``). Pure.
enum RefreshSchedule {
    struct Feed {
        var id: Int64
        var refreshedAt: Date?
        var minutes: Int?
        var publishing: PublishingSchedule? = nil
        /// It announces new episodes by Podping and the daemon hears pings: polling is a safety net.
        var announced = false
    }

    /// How much less often an announced feed is polled, and the longest wait between its polls.
    static let announcedFactor = 6.0
    static let announcedLongest: TimeInterval = 86_400

    /// The feeds due now (never fetched, or their interval has passed), and when to look again:
    /// the soonest of the others' turns, at least a minute away.
    static func due(_ feeds: [Feed], defaultInterval: TimeInterval, now: Date) -> (due: [Int64], next: Date) {
        var due: [Int64] = []
        var next = now.addingTimeInterval(defaultInterval)
        for feed in feeds {
            var interval = feed.minutes.map { TimeInterval($0) * 60 } ?? defaultInterval
            if feed.announced { interval = max(interval, min(interval * announcedFactor, announcedLongest)) }
            guard let last = feed.refreshedAt else {
                due.append(feed.id)
                continue
            }
            let turn = feed.publishing?.nextFetch(after: last, interval: interval) ?? last.addingTimeInterval(interval)
            guard turn > now else {
                due.append(feed.id)
                continue
            }
            next = min(next, turn)
        }
        return (due, max(next, now.addingTimeInterval(60)))
    }
}
