import FerryModel
import Foundation

/// Dates as podcast feeds really write them. RSS asks for RFC 822 (`Wed, 01 May 2024 10:00:00
/// +0000`), Atom for RFC 3339 (`2024-05-01T10:00:00Z`); feeds send both, in either place, with
/// full or lowercase month names, two-digit years, no seconds, no zone, or RFC 850's dashes.
/// Parsed by hand, over bytes: `DateFormatter` depends on locale settings (STYLE: "Linux
/// specifics"), and a feed has thousands of dates.
///
/// Bytes are written as hex literals, commented: `UInt8(ascii:)` is a function call per byte in
/// debug builds, where the tests parse a 50 MB feed.
public enum RFC822Date {
    /// The date, or nil when the text does not name a calendar day. Rules, in order of leniency:
    /// the weekday is ignored; a month name may be full or abbreviated (`Sept`), in any case;
    /// the day has one or two digits; a two-digit year below 70 is 20xx, else 19xx; time and
    /// seconds are optional; a missing zone means UTC, as does an unknown zone name after the
    /// time and a military letter (RFC 5322 §4.3: RFC 822 got their signs wrong); `AM`/`PM` and a
    /// trailing `(comment)` are understood.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count <= 128 else { return nil }
        var start = 0
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        guard start < end else { return nil }
        let trimmed = bytes[start..<end]
        if isDigit(bytes[start]), let iso = ISO8601Parts(trimmed) { return iso.date }
        return RFC822Parts(trimmed)?.date
    }

    /// Offsets of zone names, in seconds east of UTC: RFC 822's North American zones and others
    /// common in feeds. Ambiguous names (`IST`) are left out and so read as UTC.
    static let zones: [String: Int] = [
        "gmt": 0, "ut": 0, "utc": 0, "z": 0, "wet": 0,
        "est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
        "mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
        "akst": -9 * 3600, "akdt": -8 * 3600, "hst": -10 * 3600, "ast": -4 * 3600, "adt": -3 * 3600,
        "nst": -12_600, "ndt": -9_000,
        "bst": 3600, "west": 3600, "cet": 3600, "cest": 2 * 3600, "eet": 2 * 3600, "eest": 3 * 3600,
        "msk": 3 * 3600, "hkt": 8 * 3600, "sgt": 8 * 3600, "awst": 8 * 3600, "jst": 9 * 3600, "kst": 9 * 3600,
        "acst": 34_200, "aest": 10 * 3600, "aedt": 11 * 3600, "nzst": 12 * 3600, "nzdt": 13 * 3600,
    ]

    static let monthNames = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
        "november", "december",
    ]
    static let weekdayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    typealias Clock = (hour: Int, minute: Int, second: Int, fraction: Double)

    /// A numeric zone: `+0200`, `-05:00`, `+02`, `-5`. Seconds east of UTC.
    static func numericOffset(_ text: ArraySlice<UInt8>) -> Int? {
        guard let sign = text.first, sign == 0x2B || sign == 0x2D else { return nil }  // `+` `-`
        var digits: [Int] = []
        var colons = 0
        var index = text.startIndex + 1
        while index < text.endIndex {
            let byte = text[index]
            if byte == 0x3A {  // `:`
                colons += 1
            } else if isDigit(byte) {
                digits.append(Int(byte - 0x30))  // `0`
            } else {
                return nil
            }
            index += 1
        }
        guard colons <= 1 else { return nil }
        let hours: Int
        let minutes: Int
        switch digits.count {
        case 1: (hours, minutes) = (digits[0], 0)
        case 2: (hours, minutes) = (digits[0] * 10 + digits[1], 0)
        case 4: (hours, minutes) = (digits[0] * 10 + digits[1], digits[2] * 10 + digits[3])
        default: return nil
        }
        guard hours <= 23, minutes <= 59 else { return nil }
        return (sign == 0x2D ? -1 : 1) * (hours * 3600 + minutes * 60)  // `-`
    }

    /// `HH:MM[:SS[.fff]]`, each of the first three with one or two digits.
    static func clock(_ text: ArraySlice<UInt8>) -> Clock? {
        var values: [Int] = []
        var fraction = 0.0
        var index = text.startIndex
        while values.count < 3 {
            let start = index
            var value = 0
            while index < text.endIndex, isDigit(text[index]), index - start < 3 {
                value = value * 10 + Int(text[index] - 0x30)  // `0`
                index += 1
            }
            guard (1...2).contains(index - start) else { return nil }
            values.append(value)
            guard index < text.endIndex, text[index] == 0x3A else { break }  // `:`
            index += 1
        }
        if values.count == 3, index < text.endIndex, text[index] == 0x2E {  // `.`
            var scale = 0.1
            index += 1
            guard index < text.endIndex else { return nil }
            while index < text.endIndex, isDigit(text[index]) {
                fraction += Double(text[index] - 0x30) * scale  // `0`
                scale /= 10
                index += 1
            }
        }
        guard values.count >= 2, index == text.endIndex else { return nil }
        return (values[0], values[1], values.count == 3 ? values[2] : 0, fraction)
    }

    /// The value of a run of ASCII digits; `Int.max`, which no date's part accepts, for a run too
    /// long to fit: a feed's `Mon, 1666…6 Jul` overflowed, and Swift traps on overflow, killing
    /// the process (found by tests/torture/fuzz).
    static func number(_ digits: ArraySlice<UInt8>) -> Int {
        guard digits.count <= 18 else { return .max }
        var value = 0
        var index = digits.startIndex
        while index < digits.endIndex {
            value = value * 10 + Int(digits[index] - 0x30)  // `0`
            index += 1
        }
        return value
    }

    /// Puts the parts together; nil if any is out of range.
    static func date(year: Int, month: Int, day: Int, clock: Clock, offset: Int) -> Date? {
        guard
            let utc = HTTPDate.utcDate(
                year: year, month: month, day: day, hour: clock.hour, minute: clock.minute, second: clock.second)
        else { return nil }
        return utc.addingTimeInterval(clock.fraction - Double(offset))
    }

    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= 0x30 && byte <= 0x39  // `0` `9`
    }

    /// A byte of a clock: a digit, `:` or `.`.
    static func isClockByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || byte == 0x3A || byte == 0x2E  // `:` `.`
    }

    static func isLetter(_ byte: UInt8) -> Bool {
        HTMLTokenizer.isLetter(byte)
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        HTMLTokenizer.isSpace(byte)
    }
}
