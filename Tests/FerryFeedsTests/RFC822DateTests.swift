import Foundation
import Testing

@testable import FerryFeeds

@Suite struct RFC822DateTests {
    /// 2024-05-01T10:00:00Z.
    static let t: TimeInterval = 1_714_557_600
    static let hour: TimeInterval = 3600

    static let forms: [(String, TimeInterval)] = [
        // RFC 822 / 2822 as specified, and as written.
        ("Wed, 01 May 2024 10:00:00 +0000", t),
        ("Wed, 1 May 2024 10:00:00 +0000", t),
        ("Wed, 01 May 2024 10:00:00 GMT", t),
        ("01 May 2024 10:00:00 GMT", t),
        ("Wed, 01 May 2024 10:00:00", t),  // no zone: UTC
        ("Wed, 1 May 2024 10:00 +0000", t),  // no seconds
        ("wed, 01 may 2024 10:00:00 gmt", t),
        ("WED, 01 MAY 2024 10:00:00 GMT", t),
        ("Wed,01 May 2024 10:00:00 +0000", t),
        ("  Wed,  01   May   2024\t10:00:00   +0000  ", t),
        ("Wednesday, 01 May 2024 10:00:00 GMT", t),
        ("Wed, 01 May. 2024 10:00:00 GMT", t),
        ("Sat, 01 Sept 2024 00:00:00 GMT", 1_725_148_800),
        ("01 September 2024 00:00:00 GMT", 1_725_148_800),
        // RFC 850 and asctime.
        ("Wednesday, 01-May-24 10:00:00 GMT", t),
        ("Wed, 01-May-2024 10:00:00 GMT", t),
        ("Wed May  1 10:00:00 2024", t),
        // US order, 12-hour clocks, JavaScript's Date.toString.
        ("May 1, 2024 10:00:00 AM EST", t + 5 * hour),
        ("Wed, 01 May 2024 10:00 PM GMT", t + 12 * hour),
        ("Wed, 01 May 2024 12:00 AM GMT", t - 10 * hour),
        ("Wed May 01 2024 10:00:00 GMT+0200 (Central European Summer Time)", t - 2 * hour),
        // Zones.
        ("Wed, 01 May 2024 10:00:00 UT", t),
        ("Wed, 01 May 2024 10:00:00 UTC", t),
        ("Wed, 01 May 2024 10:00:00 Z", t),
        ("01 May 2024 10:00 EST", t + 5 * hour),
        ("Wed, 01 May 2024 10:00:00 EDT", t + 4 * hour),
        ("Wed, 01 May 2024 10:00:00 CST", t + 6 * hour),
        ("Wed, 01 May 2024 10:00:00 CDT", t + 5 * hour),
        ("Wed, 01 May 2024 10:00:00 MST", t + 7 * hour),
        ("Wed, 01 May 2024 10:00:00 MDT", t + 6 * hour),
        ("Wed, 01 May 2024 10:00:00 PST", t + 8 * hour),
        ("Wed, 01 May 2024 10:00:00 PDT", t + 7 * hour),
        ("Wed, 01 May 2024 10:00:00 CEST", t - 2 * hour),
        ("Wed, 01 May 2024 10:00:00 A", t),  // military letters: UTC (RFC 5322 §4.3)
        ("Wed, 01 May 2024 10:00:00 XYZ", t),  // unknown names: UTC
        ("Wed, 01 May 2024 10:00:00 -0500", t + 5 * hour),
        ("Wed, 01 May 2024 10:00:00 -05:00", t + 5 * hour),
        ("Wed, 01 May 2024 10:00:00 +0530", t - 5.5 * hour),
        ("Wed, 01 May 2024 10:00:00 +02", t - 2 * hour),
        // RFC 3339 / ISO 8601, as Atom writes it.
        ("2024-05-01T10:00:00Z", t),
        ("2024-05-01t10:00:00z", t),
        ("2024-05-01T10:00Z", t),
        ("2024-05-01T10:00:00+02:00", t - 2 * hour),
        ("2024-05-01T10:00:00.123+02:00", t - 2 * hour + 0.123),
        ("2024-05-01T10:00:00.5-0130", t + 1.5 * hour + 0.5),
        ("2024-05-01 10:00:00", t),
        ("2024-05-01T10:00:00 GMT", t),
        ("2024-05-01", t - 10 * hour),
        // Edges of the calendar.
        ("Sun, 06 Jul 2014 12:56:00 GMT", 1_404_651_360),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),
        ("Thu, 29 Feb 2024 00:00:00 +0000", 1_709_164_800),
        ("Fri, 31 Dec 99 23:59:59 GMT", 946_684_799),
        ("Tue, 01 Jan 69 00:00:00 GMT", 3_124_224_000),
        ("Sat, 31 Dec 2016 23:59:60 GMT", 1_483_228_800),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
    ]

    @Test(arguments: forms)
    func parses(_ text: String, _ expected: TimeInterval) throws {
        let date = try #require(RFC822Date.parse(text))
        #expect(abs(date.timeIntervalSince1970 - expected) < 0.0005, "\(text) gave \(date.timeIntervalSince1970)")
    }

    @Test(arguments: [
        "", "   ", "garbage", "1714557600", "10:00:00", "May 2024",
        "Wed, 01 Foo 2024 10:00:00 GMT",
        "Wed, 01 May 10:00:00 GMT",  // no year
        "Wed, 01 May 2024 2025 10:00:00 GMT",  // a number too many
        "Wed, 32 May 2024 10:00:00 GMT",
        "Wed, 31 Apr 2024 10:00:00 GMT",
        "Wed, 29 Feb 2023 10:00:00 GMT",
        "Wed, 01 May 2024 24:00:00 GMT",
        "Wed, 01 May 2024 10:60:00 GMT",
        "Wed, 01 May 2024 10:00:61 GMT",
        "Wed, 01 May 2024 10:00:00 +9999",
        "Wed, 01 May 2024 13:00 PM",
        "Wed, 01 May 2024 10:00:00 GMT 10:00:00",
        "Mo, 01 May 2024",
        "2024-13-01T10:00:00Z",
        "2024-05-01T25:00:00Z",
        "2024-05-01T10:00:00+25:00",
        "2024-05-01T10:00:00 nowhere",
        "2024-5-1",
        String(repeating: "Wed, 01 May 2024 ", count: 10),
        // Numbers too long for an Int: Swift traps on the overflow (found by fuzzing).
        "Mon, " + String(repeating: "6", count: 40) + "3 Jul 2020",
        "Mon, 13 Jul " + String(repeating: "9", count: 19),
        String(repeating: "1", count: 25) + "-05-01T10:00:00Z",
    ])
    func rejects(_ text: String) {
        #expect(RFC822Date.parse(text) == nil)
    }
}
