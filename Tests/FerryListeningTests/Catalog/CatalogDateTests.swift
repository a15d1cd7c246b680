import Foundation
import Testing

import FerryCore
@testable import FerryListening

@Suite struct CatalogDateTests {
    /// 2010-10-25 07:00:00 UTC.
    static let example: TimeInterval = 1_287_990_000

    @Test(arguments: [
        // Today's ISO 8601 and the older form, both in the fixtures.
        ("2010-10-25T07:00:00Z", example),
        ("2010-10-25 07:00:00 Etc/GMT", example),
        // Variations on them.
        ("2010-10-25T07:00:00.000Z", example),
        ("2010-10-25T07:00:00.5Z", example),
        ("2010-10-25t07:00:00z", example),
        ("2010-10-25T07:00Z", example),
        ("2010-10-25T07:00:00", example),
        ("2010-10-25 07:00:00 GMT", example),
        ("2010-10-25 07:00:00 UTC", example),
        ("  2010-10-25T07:00:00Z\n", example),
        ("2010-10-25T09:00:00+02:00", example),
        ("2010-10-25T00:00:00-0700", example),
        ("2010-10-25", example - 7 * 3600),
        ("1970-01-01T00:00:00Z", 0),
        ("2024-02-29T12:00:00Z", 1_709_208_000),
    ])
    func parses(text: String, expected: TimeInterval) {
        #expect(CatalogDate.parse(text) == Date(timeIntervalSince1970: expected))
    }

    @Test(arguments: [
        "", "yesterday", "2010-10-25T07", "2010-10-25T07:00:00 PST", "2010-13-01T00:00:00Z", "2010-02-30T00:00:00Z",
        "2010-10-25T25:00:00Z", "10-10-25T07:00:00Z", "2010/10/25 07:00:00", "2010-10-25T07:00:00+25:00",
        "2010-10-25T07:00:00Zjunk", String(repeating: "2", count: 100),
    ])
    func refuses(text: String) {
        #expect(CatalogDate.parse(text) == nil)
    }
}
