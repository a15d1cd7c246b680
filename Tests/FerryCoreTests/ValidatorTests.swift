@testable import FerryCore
import Testing

@Suite struct ValidatorTests {
    static let date = "Sun, 06 Nov 1994 08:49:37 GMT"

    @Test(arguments: [
        // A strong ETag is preferred, trimmed, quotes kept (it goes back verbatim in If-Range).
        (#""abc""#, nil, #""abc""#),
        (#""abc""#, date, #""abc""#),
        ("  \"abc\"\t", nil, #""abc""#),
        (#""""#, nil, #""""#),  // the empty opaque tag is valid
        (#""with space""#, nil, #""with space""#),
        // A weak or malformed ETag does not count; Last-Modified is the fallback.
        (#"W/"abc""#, date, date),
        (#"W/"abc""#, nil, nil),
        (#"w/"abc""#, nil, nil),
        ("abc", date, date),  // unquoted
        ("abc", nil, nil),
        (#"""#, nil, nil),  // a lone quote
        (#""abc"#, nil, nil),
        (#"abc""#, nil, nil),
        ("", date, date),
        ("   ", nil, nil),
        // Last-Modified only when it parses as an HTTP date.
        (nil, date, date),
        (nil, "  \(date)  ", date),
        (nil, "Sunday, 06-Nov-94 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT"),
        (nil, "yesterday", nil),
        (nil, "", nil),
        (nil, "Sun, 31 Feb 1994 08:49:37 GMT", nil),
        (nil, nil, nil),
    ] as [(String?, String?, String?)])
    func validator(_ etag: String?, _ lastModified: String?, _ expected: String?) {
        #expect(Validator.from(etag: etag, lastModified: lastModified) == expected)
    }
}
