import Foundation

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, the obsolete
/// RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994`. Parsed by
/// hand: `DateFormatter` depends on locale settings.
public enum HTTPDate {
    package static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    public static func parse(_ text: String) -> Date? {
        guard text.utf8.count <= 64 else { return nil }
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" })
        var month: Int?
        var numbers: [Int] = []  // In all three forms the day comes before the year.
        var clock: [Int] = []
        for token in tokens {
            if token.contains(":") {
                clock = token.split(separator: ":").compactMap { Int($0) }
            } else if let number = Int(token) {
                numbers.append(number)
            } else if month == nil, token.count == 3, let index = months.firstIndex(of: token.lowercased()) {
                month = index + 1
            }
        }
        guard let month, numbers.count == 2, clock.count == 3 else { return nil }
        var year = numbers[1]
        if year < 100 { year += year < 70 ? 2000 : 1900 }
        return utcDate(year: year, month: month, day: numbers[0], hour: clock[0], minute: clock[1], second: clock[2])
    }

    /// A UTC date from its parts, or nil if a part is out of range.
    package static func utcDate(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour),
            (0...59).contains(minute), (0...60).contains(second), (1...9999).contains(year)
        else { return nil }
        // The calendar would roll 31 Feb over into March.
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        guard day <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] else { return nil }
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return utcCalendar.date(from: components)
    }

    package static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// IMF-fixdate, as servers expect in `If-Modified-Since`.
    public static func format(_ date: Date) -> String {
        let c = utcCalendar.dateComponents([.weekday, .year, .month, .day, .hour, .minute, .second], from: date)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        func two(_ n: Int?) -> String { n.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "00" }
        let month = months[(c.month ?? 1) - 1].capitalized
        return "\(weekdays[(c.weekday ?? 1) - 1]), \(two(c.day)) \(month) \(c.year ?? 1970) \(two(c.hour)):\(two(c.minute)):\(two(c.second)) GMT"
    }
}
