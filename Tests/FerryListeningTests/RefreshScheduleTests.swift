import FerryCore
@testable import FerryListening
import Foundation
import Testing

@Suite struct RefreshScheduleTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aFeedIsDueWhenItsIntervalHasPassed() {
        let feeds = [
            RefreshSchedule.Feed(id: 1, refreshedAt: nil, minutes: nil),  // never fetched
            RefreshSchedule.Feed(id: 2, refreshedAt: now.addingTimeInterval(-3600), minutes: nil),  // the daemon's hour, just passed
            RefreshSchedule.Feed(id: 3, refreshedAt: now.addingTimeInterval(-600), minutes: 15),  // its own, 5 min to go
            RefreshSchedule.Feed(id: 4, refreshedAt: now.addingTimeInterval(-1200), minutes: 15),  // its own, passed
            RefreshSchedule.Feed(id: 5, refreshedAt: now.addingTimeInterval(-60), minutes: 10_080),  // weekly
        ]
        let (due, next) = RefreshSchedule.due(feeds, defaultInterval: 3600, now: now)
        #expect(due == [1, 2, 4])
        #expect(next == now.addingTimeInterval(300))
    }

    @Test func theNextLookIsAtMostTheDefaultIntervalAndAtLeastAMinuteAway() {
        #expect(RefreshSchedule.due([], defaultInterval: 3600, now: now).next == now.addingTimeInterval(3600))
        let soon = [RefreshSchedule.Feed(id: 1, refreshedAt: now.addingTimeInterval(-899), minutes: 15)]
        #expect(RefreshSchedule.due(soon, defaultInterval: 3600, now: now) == ([], now.addingTimeInterval(60)))
    }

    /// A feed that announces by Podping, while pings are heard, is polled six times less often
    /// (a day apart at most, and never more often than it was).
    @Test func aFeedAnnouncedByPodpingIsPolledAsASafetyNet() {
        let hour = RefreshSchedule.Feed(id: 1, refreshedAt: now.addingTimeInterval(-3 * 3600), minutes: nil, announced: true)
        let quarter = RefreshSchedule.Feed(id: 2, refreshedAt: now.addingTimeInterval(-3600), minutes: 15, announced: true)
        let weekly = RefreshSchedule.Feed(id: 3, refreshedAt: now.addingTimeInterval(-86_400), minutes: 10_080, announced: true)
        let (due, next) = RefreshSchedule.due([hour, quarter, weekly], defaultInterval: 3600, now: now)
        #expect(due.isEmpty, "6 h, 90 min and a week: none has passed")
        #expect(next == now.addingTimeInterval(30 * 60), "the quarter-hourly feed in 90 minutes, 60 of them gone")
        var unheard = hour
        unheard.announced = false
        #expect(RefreshSchedule.due([unheard], defaultInterval: 3600, now: now).due == [1], "without pings, its hour as before")
        let daily = RefreshSchedule.Feed(id: 4, refreshedAt: now.addingTimeInterval(-86_400), minutes: 360, announced: true)
        #expect(RefreshSchedule.due([daily], defaultInterval: 3600, now: now).due == [4], "6 × 6 h is capped at a day")
    }
}
