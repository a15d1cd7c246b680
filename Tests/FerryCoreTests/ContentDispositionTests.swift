@testable import FerryCore
import Testing

@Suite struct ContentDispositionTests {
    @Test(arguments: [
        (#"attachment; filename="episode.mp3""#, "episode.mp3"),
        ("attachment; filename=episode.mp3", "episode.mp3"),
        (#"inline; FILENAME="Upper.mp3""#, "Upper.mp3"),
        (#"ATTACHMENT; FileName="mixed.mp3""#, "mixed.mp3"),
        ("attachment;filename=tight.mp3", "tight.mp3"),
        ("attachment;\tfilename=tabbed.mp3", "tabbed.mp3"),
        (#"attachment ;  filename = "spaced.mp3" "#, "spaced.mp3"),
        ("attachment; filename=trailing.mp3   ; size=10", "trailing.mp3"),
        (#"attachment; size=10; filename="after.mp3"; creation-date="x""#, "after.mp3"),
        // Quoted strings: separators inside quotes, and backslash escapes.
        (#"attachment; filename="a;b.mp3""#, "a;b.mp3"),
        (#"attachment; filename="a=b.mp3""#, "a=b.mp3"),
        (#"attachment; filename="say \"hi\".mp3""#, #"say "hi".mp3"#),
        (#"attachment; filename="back\\slash.mp3""#, #"back\slash.mp3"#),
        (#"attachment; filename="\e\s\c.mp3""#, "esc.mp3"),
        (#"attachment; filename="unterminated.mp3"#, "unterminated.mp3"),
        (#"attachment; filename="spaces inside.mp3""#, "spaces inside.mp3"),
        // Parameters whose quoted values look like a filename parameter are not one.
        (#"attachment; note="x; filename=evil.exe"; filename="good.mp3""#, "good.mp3"),
        (#"attachment; filename="good.mp3"; note="x; filename=evil.exe""#, "good.mp3"),
    ])
    func plainFileName(_ header: String, _ expected: String) {
        #expect(ContentDisposition.fileName(header) == expected)
    }

    @Test(arguments: [
        // filename* wins over filename, in either order.
        (#"attachment; filename="fallback.mp3"; filename*=UTF-8''%e2%82%ac%20rates.mp3"#, "€ rates.mp3"),
        (#"attachment; filename*=UTF-8''%E2%82%AC%20rates.mp3; filename="fallback.mp3""#, "€ rates.mp3"),
        ("attachment; filename*=utf-8'en'%C3%A9t%C3%A9.mp3", "été.mp3"),
        ("attachment; filename*=UTF-8'en-GB'plain.mp3", "plain.mp3"),
        ("attachment; filename*=iso-8859-1'en'%A3%20rates.mp3", "£ rates.mp3"),
        ("attachment; filename*=ISO-8859-1''caf%E9.mp3", "café.mp3"),
        // A broken filename* falls back to filename.
        (#"attachment; filename*=windows-1252''x.mp3; filename="fallback.mp3""#, "fallback.mp3"),
        (#"attachment; filename*=UTF-8''%zz.mp3; filename="fallback.mp3""#, "fallback.mp3"),
        (#"attachment; filename*=UTF-8''truncated%e; filename="fallback.mp3""#, "fallback.mp3"),
        (#"attachment; filename*=UTF-8''truncated%; filename="fallback.mp3""#, "fallback.mp3"),
        (#"attachment; filename*=UTF-8''%ff%fe.mp3; filename="fallback.mp3""#, "fallback.mp3"),  // not UTF-8
        (#"attachment; filename*=no-quotes.mp3; filename="fallback.mp3""#, "fallback.mp3"),
        (#"attachment; filename*=UTF-8'only-one.mp3; filename="fallback.mp3""#, "fallback.mp3"),
        (#"attachment; filename="fallback.mp3"; filename*=UTF-8''"#, "fallback.mp3"),  // empty filename*
        (#"attachment; filename*=UTF-8''good.mp3; filename*=bogus"#, "good.mp3"),  // a later broken one keeps the good one
    ])
    func extendedFileName(_ header: String, _ expected: String) {
        #expect(ContentDisposition.fileName(header) == expected)
    }

    /// The parser returns the raw name: hostile content passes through and FileNamer must clean it.
    @Test(arguments: [
        (#"attachment; filename="../../etc/passwd""#, "../../etc/passwd"),
        (#"attachment; filename="..\\..\\boot.ini""#, #"..\..\boot.ini"#),
        ("attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd", "../../etc/passwd"),
        ("attachment; filename*=UTF-8''a%E2%80%AEgpj.exe", "a\u{202E}gpj.exe"),
        ("attachment; filename*=UTF-8''nul%00byte.mp3", "nul\u{0}byte.mp3"),
        ("attachment; filename*=UTF-8''line%0Abreak.mp3", "line\nbreak.mp3"),
        (#"attachment; filename=".hidden""#, ".hidden"),
    ])
    func hostileNamesAreReturnedRaw(_ header: String, _ expected: String) {
        #expect(ContentDisposition.fileName(header) == expected)
    }

    @Test(arguments: [
        "",
        "attachment",
        "inline",
        #"filename="no-disposition-type.mp3""#,  // the first token is the type, not a parameter
        "attachment;",
        "attachment; ",
        "attachment; size=10",
        #"attachment; name="field""#,
        #"attachment; filename="""#,
        "attachment; filename=",
        "attachment; filename=   ",
        "attachment; filename*=UTF-8''",
        "attachment; filename*=bogus",
        #"attachment; note="a;filename=evil.exe""#,
        "attachment; filenames=a.mp3",
        "attachment; xfilename=a.mp3",
    ])
    func noFileName(_ header: String) {
        #expect(ContentDisposition.fileName(header) == nil)
    }

    @Test func capsTheHeaderAt4096Bytes() {
        let prefix = "attachment; filename="
        let atCap = prefix + String(repeating: "a", count: 4096 - prefix.utf8.count)
        #expect(atCap.utf8.count == 4096)
        #expect(ContentDisposition.fileName(atCap) == String(repeating: "a", count: 4096 - prefix.utf8.count))
        #expect(ContentDisposition.fileName(atCap + "a") == nil)
        // Multibyte characters count in bytes: 2,000 × "é" is 4,000 bytes plus the prefix.
        #expect(ContentDisposition.fileName(prefix + String(repeating: "é", count: 2100)) == nil)
    }

    @Test func parametersAreLowerCasedAndUnquoted() {
        let pairs = ContentDisposition.parameters(#"form-data; Name="field"; FILENAME=x.bin; empty=; q="a\"b""#)
        #expect(pairs.map { "\($0.0)=\($0.1)" } == ["name=field", "filename=x.bin", "empty=", #"q=a"b"#])
    }

    @Test func parametersOfHeaderWithoutParameters() {
        #expect(ContentDisposition.parameters("attachment").isEmpty)
        #expect(ContentDisposition.parameters("attachment; novalue").isEmpty)
    }

    @Test(arguments: [
        ("UTF-8'en'%e2%82%ac%20rates.mp3", "€ rates.mp3"),
        ("utf-8''plain.mp3", "plain.mp3"),
        ("UTF-8''%41%62%63", "Abc"),
        ("UTF-8''", ""),
        ("UTF-8'''quote", "'quote"),  // only the first two quotes delimit
        ("iso-8859-1''%FF", "ÿ"),
    ])
    func decodeExtended(_ value: String, _ expected: String) {
        #expect(ContentDisposition.decodeExtended(value) == expected)
    }

    @Test(arguments: ["", "plain", "UTF-8'x", "''x", "us-ascii''x", "UTF-8''%", "UTF-8''%4", "UTF-8''%G0", "UTF-8''%C3"])
    func decodeExtendedRejects(_ value: String) {
        #expect(ContentDisposition.decodeExtended(value) == nil)
    }
}
