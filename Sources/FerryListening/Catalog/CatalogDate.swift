import FerryCore
import FerryFeeds
import FerryKit
import Foundation

/// Release dates as Apple's catalog writes them: ISO 8601 today (`2010-10-25T07:00:00Z`),
/// and in older answers `2005-07-19 07:00:00 Etc/GMT`. Parsed by hand, like ``HTTPDate``:
/// formatters depend on locale settings.
enum CatalogDate {
    /// Accepts `YYYY-MM-DD`, then optionally `T` or a space and `hh:mm[:ss[.fff]]`, then `Z`,
    /// `±hh:mm`, `±hhmm`, ` GMT`, ` UTC`, ` Etc/GMT` or nothing (read as UTC).
    static func parse(_ text: String) -> Date? {
        let text = text.trimmingWhitespace()
        guard text.utf8.count <= 64 else { return nil }
        var rest = text[...]
        guard let year = number(&rest, digits: 4), skip("-", &rest), let month = number(&rest, digits: 2), skip("-", &rest),
            let day = number(&rest, digits: 2)
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        if skip("T", &rest) || skip("t", &rest) || (rest.first == " " && rest.dropFirst().first?.isNumber == true && skip(" ", &rest)) {
            guard let h = number(&rest, digits: 2), skip(":", &rest), let m = number(&rest, digits: 2) else { return nil }
            (hour, minute) = (h, m)
            if skip(":", &rest) {
                guard let s = number(&rest, digits: 2) else { return nil }
                second = s
                if skip(".", &rest) || skip(",", &rest) {
                    guard rest.first?.isASCII == true, rest.first?.isNumber == true else { return nil }
                    rest = rest.drop(while: { $0.isASCII && $0.isNumber })
                }
            }
        }
        guard let offset = zoneOffset(rest),
            let date = HTTPDate.utcDate(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        return date.addingTimeInterval(TimeInterval(-offset))
    }

    /// Seconds east of UTC, or nil for a zone Ferry does not know.
    private static func zoneOffset(_ zone: Substring) -> Int? {
        let zone = zone.trimmingWhitespace()
        if ["", "Z", "z", "GMT", "UTC", "Etc/GMT", "Etc/UTC"].contains(zone) { return 0 }
        guard let sign = zone.first, sign == "+" || sign == "-" else { return nil }
        var rest = zone.dropFirst()
        guard let hours = number(&rest, digits: 2) else { return nil }
        _ = skip(":", &rest)
        guard let minutes = number(&rest, digits: 2), rest.isEmpty, hours < 24, minutes < 60 else { return nil }
        return (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    private static func number(_ text: inout Substring, digits: Int) -> Int? {
        let prefix = text.prefix(digits)
        guard prefix.count == digits, prefix.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        text = text.dropFirst(digits)
        return Int(prefix)
    }

    private static func skip(_ character: Character, _ text: inout Substring) -> Bool {
        guard text.first == character else { return false }
        text = text.dropFirst()
        return true
    }
}
