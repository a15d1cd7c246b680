import Foundation

/// Bandwidth by the clock: windows of the week with a limit (or none), and what holds outside
/// them: no limit, or nothing at all (paused). In the daemon's local time zone.
///
/// ```
/// ferry session set '*' --limit-rate 2M --during 'Mon-Fri 09:00-18:00'     2 MB/s in office hours
/// ferry session set podcasts --during '01:00-07:00' --outside paused       only at night
/// ```
public struct RateSchedule: Codable, Sendable, Hashable {
    public struct Window: Codable, Sendable, Hashable {
        /// Days it starts on, 1 (Monday) to 7 (Sunday); empty: every day.
        public var days: Set<Int>
        /// Seconds after midnight: it starts at `start` and ends at `end`, the next day when
        /// `end` is not after `start` (`22:00-06:00`).
        public var start: Int
        public var end: Int
        /// The limit inside it, bytes a second; nil: none.
        public var bytesPerSecond: Int64?

        public init(days: Set<Int> = [], start: Int, end: Int, bytesPerSecond: Int64? = nil) {
            self.days = days
            self.start = start
            self.end = end
            self.bytesPerSecond = bytesPerSecond
        }
    }

    public enum Outside: String, Codable, Sendable, Hashable {
        /// No limit outside the windows.
        case unlimited
        /// Nothing runs outside the windows.
        case paused
    }

    public var windows: [Window]
    public var outside: Outside

    public init(windows: [Window], outside: Outside = .unlimited) {
        self.windows = windows
        self.outside = outside
    }

    /// What holds at one moment, and until when.
    public struct State: Sendable, Hashable {
        /// The limit, bytes a second; nil: none.
        public var bytesPerSecond: Int64?
        /// Nothing may run.
        public var paused: Bool
        /// When this changes next (nil: never).
        public var until: Date?
        /// Inside one of the windows (the hours the user marked: discretionary sessions run then).
        public var inWindow: Bool

        /// Each parameter sets the property of the same name.
        public init(bytesPerSecond: Int64?, paused: Bool, until: Date?, inWindow: Bool = false) {
            self.bytesPerSecond = bytesPerSecond
            self.paused = paused
            self.until = until
            self.inWindow = inWindow
        }
    }

    /// What holds at `date`, in `calendar`'s time zone.
    public func state(at date: Date, calendar: Calendar = .current) -> State {
        let active = windows.filter { contains($0, date, calendar) }
        let bytesPerSecond: Int64?
        let paused: Bool
        if active.isEmpty {
            (bytesPerSecond, paused) = (nil, outside == .paused)
        } else {
            // Several windows at once: the tightest limit holds.
            (bytesPerSecond, paused) = (active.compactMap(\.bytesPerSecond).min(), false)
        }
        return State(bytesPerSecond: bytesPerSecond, paused: paused, until: nextChange(after: date, calendar: calendar), inWindow: !active.isEmpty)
    }

    /// Whether `window` covers `date`: it started today, or yesterday and runs past midnight.
    private func contains(_ window: Window, _ date: Date, _ calendar: Calendar) -> Bool {
        let midnight = calendar.startOfDay(for: date)
        let second = Int(date.timeIntervalSince(midnight))
        let today = Self.weekday(date, calendar)
        let overnight = window.end <= window.start
        if window.days.isEmpty || window.days.contains(today) {
            if overnight ? second >= window.start : (second >= window.start && second < window.end) { return true }
        }
        let yesterday = today == 1 ? 7 : today - 1
        return overnight && second < window.end && (window.days.isEmpty || window.days.contains(yesterday))
    }

    /// The first window edge after `date` within eight days (nil without windows).
    private func nextChange(after date: Date, calendar: Calendar) -> Date? {
        let midnight = calendar.startOfDay(for: date)
        var edges: [Date] = []
        for offset in -1...8 {
            guard let day = calendar.date(byAdding: .day, value: offset, to: midnight) else { continue }
            let weekday = Self.weekday(day, calendar)
            for window in windows where window.days.isEmpty || window.days.contains(weekday) {
                let startDate = day.addingTimeInterval(TimeInterval(window.start))
                let endDate = day.addingTimeInterval(TimeInterval(window.end + (window.end <= window.start ? 86_400 : 0)))
                edges += [startDate, endDate].filter { $0 > date }
            }
        }
        return edges.min()
    }

    /// 1 (Monday) to 7 (Sunday).
    static func weekday(_ date: Date, _ calendar: Calendar) -> Int {
        let sundayFirst = calendar.component(.weekday, from: date)  // 1 = Sunday
        return sundayFirst == 1 ? 7 : sundayFirst - 1
    }

    // MARK: - Text

    /// Reads a window as people write it: `Mon-Fri 09:00-18:00`, `Sat,Sun 10:00-12:30`,
    /// `22:00-06:00` (every day, past midnight), times with optional seconds.
    public static func window(parsing text: String, bytesPerSecond: Int64?) throws(FerryError) -> Window {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard (1...2).contains(parts.count) else {
            throw FerryError.invalidRequest("'\(text.prefix(60))' is not a window; write it like 'Mon-Fri 09:00-18:00' or '22:00-06:00'.")
        }
        let days = parts.count == 2 ? try Self.days(String(parts[0])) : []
        let times = parts.last!.split(separator: "-")
        guard times.count == 2, let start = time(String(times[0])), let end = time(String(times[1])), start != end else {
            throw FerryError.invalidRequest("'\(parts.last!.prefix(30))' is not a time range; write it like 09:00-18:00.")
        }
        return Window(days: days, start: start, end: end, bytesPerSecond: bytesPerSecond)
    }

    static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// `Mon-Fri`, `Sat,Sun`, `Mon,Wed-Fri` → 1…7.
    static func days(_ text: String) throws(FerryError) -> Set<Int> {
        var days: Set<Int> = []
        for item in text.lowercased().split(separator: ",") {
            let ends = item.split(separator: "-").map { dayNames.firstIndex(of: String($0.prefix(3))).map { $0 + 1 } }
            guard (1...2).contains(ends.count), ends.allSatisfy({ $0 != nil }), let first = ends.first!, let last = ends.last! else {
                throw FerryError.invalidRequest("'\(item.prefix(20))' is not a day or a range of days (Mon, Mon-Fri, Sat,Sun).")
            }
            var day = first
            while true {
                days.insert(day)
                if day == last { break }
                day = day % 7 + 1
            }
        }
        return days
    }

    /// `HH:MM` or `HH:MM:SS` (24:00 is the end of a day) → seconds after midnight.
    static func time(_ text: String) -> Int? {
        let parts = text.split(separator: ":").map { Int($0) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil }) else { return nil }
        let (h, m, s) = (parts[0]!, parts[1]!, parts.count == 3 ? parts[2]! : 0)
        guard (0...24).contains(h), (0...59).contains(m), (0...59).contains(s), h < 24 || (m == 0 && s == 0) else { return nil }
        return h * 3600 + m * 60 + s
    }

    /// Checks a schedule sent to the API.
    public func validate() throws(FerryError) {
        guard !windows.isEmpty, windows.count <= 64 else { throw FerryError.invalidRequest("A schedule has 1 to 64 windows.") }
        for window in windows {
            guard (0...86_400).contains(window.start), (0...86_400).contains(window.end), window.start != window.end,
                window.days.allSatisfy({ (1...7).contains($0) }), window.bytesPerSecond.map({ $0 >= 1024 }) ?? true
            else {
                throw FerryError.invalidRequest("A schedule window needs days 1-7, start and end in seconds of a day (0-86400, not equal), and a limit of at least 1024 bytes a second.")
            }
        }
    }
}
