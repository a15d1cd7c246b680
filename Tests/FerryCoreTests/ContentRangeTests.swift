@testable import FerryCore
import Testing

@Suite struct ContentRangeTests {
    struct Valid: Sendable, CustomTestStringConvertible {
        var header: String
        var range: ClosedRange<Int64>?
        var total: Int64?
        var testDescription: String { header.debugDescription }
    }

    @Test(arguments: [
        Valid(header: "bytes 100-199/1000", range: 100...199, total: 1000),
        Valid(header: "bytes 0-0/1", range: 0...0, total: 1),
        Valid(header: "bytes 0-999/1000", range: 0...999, total: 1000),
        Valid(header: "bytes 100-199/*", range: 100...199, total: nil),
        Valid(header: "bytes */1000", range: nil, total: 1000),
        Valid(header: "bytes */0", range: nil, total: 0),
        // The unit is case-insensitive; whitespace around the header and after the unit is allowed.
        Valid(header: "BYTES 5-9/10", range: 5...9, total: 10),
        Valid(header: "  bytes 5-9/10\t", range: 5...9, total: 10),
        Valid(header: "bytes   5-9/10", range: 5...9, total: 10),
        // 18 digits is the longest number accepted (always fits in Int64).
        Valid(
            header: "bytes 0-999999999999999998/999999999999999999",
            range: 0...999_999_999_999_999_998, total: 999_999_999_999_999_999
        ),
    ])
    func parsesValidHeaders(_ valid: Valid) throws {
        let parsed = try #require(ContentRange(valid.header))
        #expect(parsed == ContentRange(range: valid.range, total: valid.total))
        #expect(parsed.range == valid.range)
        #expect(parsed.total == valid.total)
    }

    @Test(arguments: [
        "",
        "   ",
        "bytes",
        "bytes ",
        "bytes=0-99/100",  // `=` is the request syntax, not the response's
        "0-99/100",  // missing unit
        "items 0-99/100",  // other unit
        "bytes 0-99",  // missing total
        "bytes 0-99/",  // empty total
        "bytes /100",  // empty range
        "bytes */*",  // neither range nor total
        "bytes *-5/100",
        "bytes -1-99/100",  // negative first
        "bytes 0--99/100",  // negative last
        "bytes 0-99/-100",  // negative total
        "bytes +1-99/100",  // signs are not digits
        "bytes 0-+99/100",
        "bytes 0-99/+100",
        "bytes 100-99/1000",  // first > last
        "bytes 0-100/100",  // last == total
        "bytes 0-200/100",  // last > total
        "bytes 0-0/0",  // nothing fits in a total of zero
        "bytes 0-99/100/200",
        "bytes 0-9-9/100",
        "bytes 099/100",  // no dash
        "bytes 0 - 99/100",  // spaces inside the range
        "bytes 0-99 /100",
        "bytes 0-99/ 100",
        "bytes 0x10-0x20/100",
        "bytes 1.5-2/100",
        "bytes ٠-٩/١٠",  // Arabic-Indic digits are numbers, but not ASCII
        "bytes ０-９/１０",  // full-width digits
        "bytes 0-99/100abc",
        "bytes 0-99/100 extra",
        "bytes 0-9223372036854775807/*",  // 19 digits: refused even though it fits
        "bytes 0-1/123456789012345678901234567890",  // 30 digits: would overflow Int64
        "bytes 123456789012345678901234567890-123456789012345678901234567891/*",
        "bytes 0-99999999999999999999/*",
    ])
    func rejectsMalformedHeaders(_ header: String) {
        #expect(ContentRange(header) == nil)
    }

    @Test func capsTheHeaderAt200Characters() {
        // Valid in shape either way; only the length differs.
        let atCap = "bytes" + String(repeating: " ", count: 190) + "0-1/2"
        #expect(atCap.count == 200)
        #expect(ContentRange(atCap) == ContentRange(range: 0...1, total: 2))
        let overCap = "bytes" + String(repeating: " ", count: 191) + "0-1/2"
        #expect(ContentRange(overCap) == nil)
    }

    @Test func memberwiseInitialiserKeepsValues() {
        let range = ContentRange(range: 3...7, total: nil)
        #expect(range.range == 3...7)
        #expect(range.total == nil)
        #expect(range != ContentRange(range: 3...7, total: 8))
    }

    @Test(arguments: [
        ("  padded  ", "padded"),
        ("\t\nboth\r\n", "both"),
        ("inner space", "inner space"),
        ("   ", ""),
        ("", ""),
        ("x", "x"),
    ])
    func trimmingWhitespace(_ input: String, _ expected: String) {
        #expect(String(input.trimmingWhitespace()) == expected)
    }
}
