import FerryModel
import Foundation
import Testing

@testable import FerryListening

/// `podcast:updateFrequency` rules as refresh schedules: windows around the days a show says it
/// publishes, the usual interval inside them, at most a week's wait outside.
@Suite struct PublishingScheduleTests {
    static let calendar = PublishingSchedule.calendar
    static func day(_ year: Int, _ month: Int, _ day: Int, hour: Int = 0) -> Date {
        calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour))!
    }

    static func schedule(_ rule: String?, start: Date? = nil, complete: Bool = false) -> PublishingSchedule? {
        PublishingSchedule(PodcastNamespace.UpdateFrequency(rrule: rule, complete: complete, start: start))
    }

    @Test func weeklyOnTuesday() throws {
        let tuesdays = try #require(Self.schedule("FREQ=WEEKLY;BYDAY=TU"))
        // 2 December 2026 is a Wednesday: the next window opens Monday 7 December, 18:00 UTC.
        let wednesday = Self.day(2026, 12, 2, hour: 10)
        #expect(tuesdays.nextFetch(after: wednesday, interval: 3600) == Self.day(2026, 12, 7, hour: 18))
        // Inside the window (Tuesday noon) the usual interval.
        #expect(tuesdays.nextFetch(after: Self.day(2026, 12, 8, hour: 12), interval: 3600) == Self.day(2026, 12, 8, hour: 13))
        // Wednesday 05:00 is still in it (publishers are late); Wednesday 07:00 is not.
        #expect(tuesdays.nextFetch(after: Self.day(2026, 12, 9, hour: 4), interval: 3600) == Self.day(2026, 12, 9, hour: 5))
        #expect(tuesdays.nextFetch(after: Self.day(2026, 12, 9, hour: 6), interval: 3600) == Self.day(2026, 12, 14, hour: 18))
    }

    @Test func everyOtherSaturdayCountsFromTheStart() throws {
        // The Mike Neumann Show's rule; without a start every Saturday counts, with one every other.
        let any = try #require(Self.schedule("FREQ=WEEKLY;INTERVAL=2;BYDAY=SA"))
        #expect(any.publishes(on: Self.day(2026, 12, 5)) && any.publishes(on: Self.day(2026, 12, 12)))
        let anchored = try #require(Self.schedule("FREQ=WEEKLY;INTERVAL=2;BYDAY=SA", start: Self.day(2026, 11, 28, hour: 9)))
        #expect(anchored.publishes(on: Self.day(2026, 11, 28)) && !anchored.publishes(on: Self.day(2026, 12, 5)))
        #expect(anchored.publishes(on: Self.day(2026, 12, 12)) && !anchored.publishes(on: Self.day(2026, 12, 11)))
    }

    @Test func monthlyYearlyAndDaily() throws {
        let fifteenth = try #require(Self.schedule("FREQ=MONTHLY;BYMONTHDAY=15"))
        #expect(fifteenth.publishes(on: Self.day(2027, 1, 15)) && !fifteenth.publishes(on: Self.day(2027, 1, 16)))
        // A month between windows is longer than a week: it waits a week at most.
        let after = Self.day(2027, 1, 17)
        #expect(fifteenth.nextFetch(after: after, interval: 3600) == after.addingTimeInterval(7 * 86_400))
        let firstMonday = try #require(Self.schedule("RRULE:FREQ=MONTHLY;BYDAY=1MO"))
        #expect(firstMonday.publishes(on: Self.day(2027, 1, 4)) && !firstMonday.publishes(on: Self.day(2027, 1, 5)))
        let yearly = try #require(Self.schedule("FREQ=YEARLY", start: Self.day(2020, 3, 1)))
        #expect(yearly.publishes(on: Self.day(2027, 3, 1)) && !yearly.publishes(on: Self.day(2027, 3, 2)))
        let daily = try #require(Self.schedule("FREQ=DAILY"))
        #expect(daily.nextFetch(after: after, interval: 3600) == after.addingTimeInterval(3600))
    }

    @Test func finishedShowsAndRulesThatAreNotOne() throws {
        let complete = try #require(Self.schedule(nil, complete: true))
        let now = Self.day(2027, 1, 1)
        #expect(complete.nextFetch(after: now, interval: 3600) == now.addingTimeInterval(7 * 86_400))
        let ended = try #require(Self.schedule("FREQ=DAILY;UNTIL=20261201T000000Z"))
        #expect(ended.nextFetch(after: now, interval: 3600) == now.addingTimeInterval(7 * 86_400))
        for rule in ["NOT A RULE", "FREQ=HOURLY", "FREQ=WEEKLY;BYDAY=XX", "FREQ=WEEKLY;INTERVAL=0", "FREQ=MONTHLY;BYMONTHDAY=40", "", "FREQ=DAILY;UNTIL=soon"] {
            #expect(Self.schedule(rule) == nil, "\(rule) is not a schedule")
        }
        #expect(Self.schedule(nil) == nil)
    }
}
