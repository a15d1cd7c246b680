import Foundation
@testable import FerryKit
import Testing

@Suite struct HTTPDateTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT, the example of RFC 9110 §5.6.7.
    static let rfcExample: TimeInterval = 784_111_777

    @Test(arguments: [
        // The three forms of RFC 9110.
        ("Sun, 06 Nov 1994 08:49:37 GMT", rfcExample),
        ("Sunday, 06-Nov-94 08:49:37 GMT", rfcExample),
        ("Sun Nov  6 08:49:37 1994", rfcExample),
        ("Sun Nov 6 08:49:37 1994", rfcExample),
        // Case-insensitive names; the weekday is not checked.
        ("sun, 06 nov 1994 08:49:37 gmt", rfcExample),
        ("SUN, 06 NOV 1994 08:49:37 GMT", rfcExample),
        ("Mon, 06 Nov 1994 08:49:37 GMT", rfcExample),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Fri, 31 Dec 1999 23:59:59 GMT", 946_684_799),
        ("Tue, 19 Jan 2038 03:14:08 GMT", 2_147_483_648),
        ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
        // Two-digit years (RFC 850): below 70 is this century, from 70 the last one.
        ("Thursday, 01-Jan-70 00:00:00 GMT", 0),
        ("Saturday, 01-Jan-00 00:00:00 GMT", 946_684_800),
        ("Tuesday, 01-Jan-69 00:00:00 GMT", 3_124_224_000),
        ("Wednesday, 21-Oct-15 07:28:00 GMT", 1_445_412_480),
        // Leap days and a leap second.
        ("Thu, 29 Feb 2024 12:00:00 GMT", 1_709_208_000),
        ("Tue, 29 Feb 2000 00:00:00 GMT", 951_782_400),
        ("Sat, 31 Dec 2016 23:59:60 GMT", 1_483_228_800),
    ])
    func parses(_ text: String, _ expected: TimeInterval) throws {
        let date = try #require(HTTPDate.parse(text))
        #expect(date.timeIntervalSince1970 == expected)
    }

    @Test(arguments: [
        "",
        "   ",
        "garbage",
        "784111777",
        "Sun, 06 Nov 1994",  // no time
        "08:49:37",  // no date
        "Sun, 06 1994 08:49:37 GMT",  // no month
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 November 1994 08:49:37 GMT",  // month names are three letters
        "Sun, Nov 1994 08:49:37 GMT",  // no day
        "Sun, 06 Nov 08:49:37 GMT",  // no year
        "Sun, 06 Nov 1994 12 08:49:37 GMT",  // one number too many
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 06 Nov 1994 08:49 GMT",
        "Sun, 06 Nov 1994 08:49:37:00 GMT",
        "Sun, 06 Nov 1994 08:xx:37 GMT",
        "Sun, 06 Nov 10000 08:49:37 GMT",
        // Days the month does not have (the calendar would roll them into the next month).
        "Thu, 31 Apr 2025 00:00:00 GMT",
        "Sun, 30 Feb 2025 00:00:00 GMT",
        "Sat, 29 Feb 2025 00:00:00 GMT",
        "Thu, 29 Feb 1900 00:00:00 GMT",  // divisible by 100, not by 400: not a leap year
        "Tue, 31 Jun 2025 00:00:00 GMT",
        "Fri, 31 Sep 2025 00:00:00 GMT",
        "Mon, 31 Nov 2025 00:00:00 GMT",
        // Longer than 64 bytes, although it contains a valid date.
        "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: " ", count: 40),
    ])
    func rejects(_ text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test(arguments: [1, 3, 5, 7, 8, 10, 12])
    func thirtyOneDayMonths(_ month: Int) throws {
        let date = try #require(HTTPDate.utcDate(year: 2025, month: month, day: 31, hour: 0, minute: 0, second: 0))
        #expect(HTTPDate.utcCalendar.component(.day, from: date) == 31)
        #expect(HTTPDate.utcCalendar.component(.month, from: date) == month)
    }

    @Test(arguments: [
        (0, 2025, 1, 1), (13, 2025, 1, 1), (1, 0, 1, 1), (1, 10_000, 1, 1), (1, 2025, 0, 1), (1, 2025, 32, 1),
        (1, 2025, 1, -1), (1, 2025, 1, 24),
    ])
    func utcDateRejectsOutOfRangeParts(_ month: Int, _ year: Int, _ day: Int, _ hour: Int) {
        #expect(HTTPDate.utcDate(year: year, month: month, day: day, hour: hour, minute: 0, second: 0) == nil)
    }

    @Test(arguments: [
        (rfcExample, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (1_709_208_000, "Thu, 29 Feb 2024 12:00:00 GMT"),
        (2_147_483_648, "Tue, 19 Jan 2038 03:14:08 GMT"),
        (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
        (946_684_799, "Fri, 31 Dec 1999 23:59:59 GMT"),
    ])
    func formatsIMFFixdate(_ seconds: TimeInterval, _ expected: String) {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test func formatDropsFractionsOfASecond() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: Self.rfcExample + 0.75)) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test(arguments: [0, 784_111_777, 951_782_400, 1_709_208_000, 1_700_000_001, 4_102_444_799] as [TimeInterval])
    func formatThenParseRoundTrips(_ seconds: TimeInterval) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let parsed = try #require(HTTPDate.parse(HTTPDate.format(date)))
        #expect(parsed == date)
    }
}
