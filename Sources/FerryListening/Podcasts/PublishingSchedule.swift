import FerryModel
import Foundation

/// When a show says it publishes (`podcast:updateFrequency`'s RRULE, RFC 5545): the days it
/// means to, so that a weekly show is not fetched every hour of the week. Around each such day
/// (from 6 hours before it begins, UTC, to 6 hours after it ends: publishers are late and time
/// zones differ) the feed is fetched at its usual interval; between them it waits, at most a
/// week (a publisher may still publish off schedule). A complete show is fetched weekly. Pure.
///
/// What is read of a rule: FREQ (DAILY, WEEKLY, MONTHLY, YEARLY), INTERVAL (counted from
/// DTSTART when the feed gives one), BYDAY (weekdays; an ordinal such as `1MO` counts as the
/// weekday), BYMONTHDAY, BYMONTH and UNTIL. A rule without FREQ, or with a value that is not one,
/// is not a schedule: the feed keeps its usual interval.
package struct PublishingSchedule: Sendable, Hashable {
    enum Frequency: String { case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY", yearly = "YEARLY" }

    let frequency: Frequency
    let interval: Int
    /// Weekdays, 1 = Sunday … 7 = Saturday (Calendar's numbering).
    let weekdays: Set<Int>
    let monthDays: Set<Int>
    let months: Set<Int>
    let until: Date?
    let start: Date?
    let complete: Bool

    /// The longest wait between fetches, whatever the rule says.
    static let longestWait: TimeInterval = 7 * 86_400
    static let before: TimeInterval = 6 * 3600
    static let after: TimeInterval = 30 * 3600

    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// nil when the frequency gives no rule Ferry understands (and is not complete).
    package init?(_ frequency: PodcastNamespace.UpdateFrequency) {
        self.complete = frequency.complete
        self.start = frequency.start
        var fields: [String: String] = [:]
        for part in (frequency.rrule ?? "").uppercased().replacingOccurrences(of: "RRULE:", with: "").split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, !pair[1].isEmpty else { if frequency.complete { continue } else { return nil } }
            fields[pair[0]] = pair[1]
        }
        let weekdayNumbers = ["SU": 1, "MO": 2, "TU": 3, "WE": 4, "TH": 5, "FR": 6, "SA": 7]
        guard let freq = fields["FREQ"].flatMap(Frequency.init(rawValue:)) else {
            guard frequency.complete else { return nil }
            (self.frequency, interval, weekdays, monthDays, months, until) = (.weekly, 1, [], [], [], nil)
            return
        }
        self.frequency = freq
        guard let interval = Int(fields["INTERVAL"] ?? "1"), (1...1000).contains(interval) else { return nil }
        self.interval = interval
        var weekdays: Set<Int> = []
        for day in (fields["BYDAY"] ?? "").split(separator: ",") {
            // `1MO`, `-1FR`: the ordinal is dropped, the weekday kept.
            guard let number = weekdayNumbers[String(day.suffix(2))], day.dropLast(2).allSatisfy({ $0.isNumber || $0 == "-" || $0 == "+" })
            else { return nil }
            weekdays.insert(number)
        }
        self.weekdays = weekdays
        func numbers(_ key: String, _ range: ClosedRange<Int>) -> Set<Int>? {
            guard let text = fields[key] else { return [] }
            let values = text.split(separator: ",").map { Int($0) }
            guard values.allSatisfy({ $0 != nil && range.contains(abs($0!)) }) else { return nil }
            return Set(values.map { $0! })
        }
        guard let monthDays = numbers("BYMONTHDAY", 1...31), let months = numbers("BYMONTH", 1...12) else { return nil }
        self.monthDays = monthDays
        self.months = months
        if let text = fields["UNTIL"] {
            guard let date = Self.ruleDate(text) else { return nil }
            until = date
        } else {
            until = nil
        }
    }

    /// When a feed last fetched at `last` (its usual interval `interval`) is fetched next.
    package func nextFetch(after last: Date, interval: TimeInterval) -> Date {
        let usual = last.addingTimeInterval(interval)
        if complete || (until.map { usual > $0.addingTimeInterval(Self.after) } ?? false) {
            return max(usual, last.addingTimeInterval(Self.longestWait))
        }
        if isNearPublishing(usual) { return usual }
        return min(nextWindow(after: usual) ?? .distantFuture, last.addingTimeInterval(Self.longestWait))
    }

    /// Whether `date` is within the window around a publishing day.
    func isNearPublishing(_ date: Date) -> Bool {
        // Days d with d - before <= date <= d + after.
        let earliest = date.addingTimeInterval(-Self.after)
        var day = Self.calendar.startOfDay(for: earliest)
        if day < earliest { day = day.addingTimeInterval(86_400) }
        let last = date.addingTimeInterval(Self.before)
        while day <= last {
            if publishes(on: day) { return true }
            day = day.addingTimeInterval(86_400)
        }
        return false
    }

    /// When the next window opens after `date` (nil: none within 400 days).
    func nextWindow(after date: Date) -> Date? {
        var day = Self.calendar.startOfDay(for: date)
        for _ in 0..<400 {
            day = day.addingTimeInterval(86_400)
            if publishes(on: day) { return max(date, day.addingTimeInterval(-Self.before)) }
        }
        return nil
    }

    /// Whether the rule has an occurrence on `day` (the start of a UTC day).
    func publishes(on day: Date) -> Bool {
        let c = Self.calendar.dateComponents([.weekday, .day, .month, .year], from: day)
        if let until, day > until { return false }
        if let start, day < Self.calendar.startOfDay(for: start) { return false }
        if !months.isEmpty, !months.contains(c.month!) { return false }
        if !monthDays.isEmpty, !monthDays.contains(c.day!) { return false }
        if !weekdays.isEmpty, !weekdays.contains(c.weekday!) { return false }
        let anchor = start.map { Self.calendar.startOfDay(for: $0) }
        switch frequency {
        case .daily:
            guard let anchor else { return true }
            return Self.days(from: anchor, to: day) % interval == 0
        case .weekly:
            if weekdays.isEmpty, let anchor, Self.calendar.component(.weekday, from: anchor) != c.weekday! { return false }
            guard let anchor else { return true }
            // Weeks counted from the start's week (its Sunday).
            let weekStart = anchor.addingTimeInterval(-Double(Self.calendar.component(.weekday, from: anchor) - 1) * 86_400)
            return (Self.days(from: weekStart, to: day) / 7) % interval == 0
        case .monthly:
            if weekdays.isEmpty, monthDays.isEmpty, let anchor, Self.calendar.component(.day, from: anchor) != c.day! { return false }
            guard let anchor else { return true }
            let a = Self.calendar.dateComponents([.year, .month], from: anchor)
            return ((c.year! - a.year!) * 12 + c.month! - a.month!) % interval == 0
        case .yearly:
            if months.isEmpty, monthDays.isEmpty, weekdays.isEmpty, let anchor {
                let a = Self.calendar.dateComponents([.month, .day], from: anchor)
                if a.month != c.month || a.day != c.day { return false }
            }
            guard let anchor else { return true }
            return (c.year! - Self.calendar.component(.year, from: anchor)) % interval == 0
        }
    }

    static func days(from: Date, to: Date) -> Int { Int((to.timeIntervalSince(from) / 86_400).rounded()) }

    /// `20261231T000000Z` or `20261231`.
    static func ruleDate(_ text: String) -> Date? {
        let digits = text.filter(\.isNumber)
        guard digits.count >= 8, let year = Int(digits.prefix(4)), let month = Int(digits.dropFirst(4).prefix(2)),
            let day = Int(digits.dropFirst(6).prefix(2))
        else { return nil }
        return calendar.date(from: DateComponents(year: year, month: month, day: day))
    }
}
