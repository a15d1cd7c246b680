import Foundation

/// What a kind of history keeps: nothing older than `age`, and no more than the newest `count`.
package struct RetentionLimit: Sendable, Equatable {
    /// Older than this goes.
    package var age: TimeInterval
    /// Beyond this many, the oldest go.
    package var count: Int

    package init(days: Double, count: Int) {
        age = days * 86_400
        self.count = count
    }
}

/// How long the journal keeps events, with iOS's meaning kept: an event stays until every client
/// that will ask for it has it.
///
/// A session that acknowledges (a FerryKit program: `BackgroundSession`, FerryURLSession) has its
/// events deleted as it acknowledges them; those it has not acknowledged stay up to
/// ``unacknowledged`` (iOS, too, drops a background session's events for an app that is gone).
/// A session that never acknowledges (the CLI, the web app, aria2's RPC, the browser extension,
/// podcasts) reads events live or re-reads the lists, so it keeps a window: ``window``.
package struct EventRetention: Sendable, Equatable {
    package typealias Limit = RetentionLimit

    /// Sessions that never acknowledge: a week, at most 10,000 events each.
    package var window = Limit(days: 7, count: 10_000)
    /// A FerryKit session's unacknowledged events: 90 days, at most 100,000 (a program not run
    /// for weeks still gets them; one uninstalled stops costing space).
    package var unacknowledged = Limit(days: 90, count: 100_000)

    package init(window: Limit = Limit(days: 7, count: 10_000), unacknowledged: Limit = Limit(days: 90, count: 100_000)) {
        self.window = window
        self.unacknowledged = unacknowledged
    }

    /// The limit of a session: `acknowledges` once its program has acknowledged (a FerryKit
    /// session acknowledges through its last acknowledged event when it opens, so a program that
    /// queued downloads and quit before any event keeps them too).
    package func limit(acknowledges: Bool) -> Limit {
        acknowledges ? unacknowledged : window
    }

    /// What of one session's events goes now: those at or below `seq` (beyond the count: the
    /// session's newest seq `count` places back, found by the store) or created before `before`.
    package func cut(acknowledges: Bool, now: Date) -> (keepNewest: Int, before: Date) {
        let limit = limit(acknowledges: acknowledges)
        return (limit.count, now.addingTimeInterval(-limit.age))
    }
}
