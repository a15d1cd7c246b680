import Foundation
@testable import FerryCore
import Testing

@Suite struct FileNamerTests {
    static let family = "👨\u{200D}👩\u{200D}👧\u{200D}👦"  // one Character, 25 bytes
    static let a196 = String(repeating: "a", count: 196)

    // MARK: - sanitize

    @Test(arguments: [
        ("episode.mp3", "episode.mp3"),
        ("Episode 42 — Ünïcødé 日本語 🎧.mp3", "Episode 42 — Ünïcødé 日本語 🎧.mp3"),
        ("e\u{301}te\u{301}.mp3", "e\u{301}te\u{301}.mp3"),  // combining marks stay
        ("C'est: l'été (live) [2024].flac", "C'est: l'été (live) [2024].flac"),
        // Paths: only the last component is kept.
        ("../../etc/passwd", "passwd"),
        ("/etc/passwd", "passwd"),
        ("..\\..\\Windows\\System32\\cmd.exe", "cmd.exe"),
        ("C:\\Users\\me\\song.mp3", "song.mp3"),
        ("mixed/..\\../x.mp3", "x.mp3"),
        ("dir/", "dir"),
        ("dir//file.mp3//", "file.mp3"),
        // Leading dots and whitespace, trailing dots and whitespace.
        (".bashrc", "bashrc"),
        ("...hidden", "hidden"),
        (". . .x.mp3", "x.mp3"),
        ("  spaced.mp3  ", "spaced.mp3"),
        ("name.", "name"),
        ("name...", "name"),
        ("name . . ", "name"),
        ("\u{3000}ideographic\u{3000}", "ideographic"),
        ("a.b", "a.b"),
        ("inner  .  dots", "inner  .  dots"),
        // Control characters.
        ("tab\there.mp3", "tabhere.mp3"),
        ("nul\u{0}.mp3", "nul.mp3"),
        ("new\nline\r.mp3", "newline.mp3"),
        ("\u{1B}[31mred.mp3", "[31mred.mp3"),
        ("del\u{7F}.mp3", "del.mp3"),
        ("c1\u{9B}\u{85}.mp3", "c1.mp3"),
        // Bidi overrides, isolates and marks; zero-width and other format characters.
        ("a\u{202E}3pm.exe", "a3pm.exe"),
        ("invoice\u{202E}fdp.exe", "invoicefdp.exe"),
        ("\u{202D}\u{202A}\u{202B}\u{202C}x.mp3", "x.mp3"),
        ("\u{2066}iso\u{2067}late\u{2068}d\u{2069}.mp3", "isolated.mp3"),
        ("\u{200E}ltr\u{200F}rtl\u{61C}.mp3", "ltrrtl.mp3"),
        ("zero\u{200B}width\u{2060}.mp3", "zerowidth.mp3"),
        ("\u{FEFF}bom.mp3", "bom.mp3"),
        ("soft\u{AD}hyphen.mp3", "softhyphen.mp3"),
        ("\u{202E}.hidden", "hidden"),  // a leading dot behind a format character still goes
        ("x.mp3\u{202E}.", "x.mp3"),
        // Separators, private use, unassigned.
        ("a\u{2028}b\u{2029}c.mp3", "abc.mp3"),
        ("\u{E000}private\u{F8FF}.mp3", "private.mp3"),
        ("un\u{378}assigned.mp3", "unassigned.mp3"),
        // The zero-width joiner is a format character too: emoji sequences fall apart, safely.
        ("👨\u{200D}👩.mp3", "👨👩.mp3"),
    ])
    func sanitize(_ raw: String, _ expected: String) {
        #expect(FileNamer.sanitize(raw) == expected)
    }

    /// A mark joined to a separator or a dot makes one Character with it; a split or a trim that
    /// compares Characters does not see them (the first input was found by tests/torture/fuzz:
    /// U+06DD, a prepended format mark, before `\`). Compared byte for byte: `==` and `contains`
    /// on Strings compare Characters too.
    @Test(arguments: [
        ("\u{FFFD}\u{06DD}\\z", "z"),
        ("\u{06DD}/..\u{06DD}/..\u{06DD}/x.mp3", "x.mp3"),
        ("a\u{0D4E}/b\u{0D4E}\\c.mp3", "c.mp3"),  // U+0D4E: a prepended letter, which is kept
        ("x/\u{0D4E}/..", nil),
        (".\u{301}bashrc", "\u{301}bashrc"),
        ("song.mp3.\u{301}", "song.mp3.\u{301}"),
    ] as [(String, String?)])
    func sanitizeSeesScalarsNotCharacters(_ raw: String, _ expected: String?) {
        let name = FileNamer.sanitize(raw)
        #expect(name.map { Array($0.utf8) } == expected.map { Array($0.utf8) })
        #expect(name.map { !$0.utf8.contains(0x2F) && !$0.utf8.contains(0x5C) && $0.utf8.first != 0x2E } ?? true)
    }

    @Test(arguments: [
        "", " ", "\t\n", "\u{00A0}", "\u{3000}",
        ".", "..", "...", ". . .", " . ", ".\u{202E}.",
        "/", "//", "\\", "../", "/..", "a/..", "../..", "..\\..", "foo/../..",
        "\u{202E}", "\u{200B}\u{200B}", "\u{0}", "\u{1B}", "\u{2028}", "\u{E000}", "\u{FEFF}.",
    ])
    func sanitizeLeavesNothing(_ raw: String) {
        #expect(FileNamer.sanitize(raw) == nil)
    }

    /// Whatever comes in, what comes out is one safe, visible, bounded path component.
    @Test(arguments: [
        "../../etc/passwd", "a\u{202E}3pm.exe", "\u{0}\u{1}\u{2}.sh", " ...\tx. ", "💥/../💥",
        String(repeating: "../", count: 1000) + "x",
        String(repeating: "é", count: 500) + ".mp3",
        String(repeating: "日本", count: 300),
        "a." + String(repeating: family, count: 10),
        "e" + String(repeating: "\u{301}", count: 300) + ".mp3",
        String(repeating: "\u{202E}", count: 300) + "x" + String(repeating: ".", count: 300),
        String(repeating: " a", count: 200) + " .",
    ])
    func sanitizeInvariants(_ raw: String) throws {
        let name = try #require(FileNamer.sanitize(raw))
        #expect(!name.isEmpty)
        #expect(name.utf8.count <= FileNamer.maxBytes)
        #expect(!name.contains("/"))
        #expect(!name.contains("\\"))
        #expect(!name.hasPrefix("."))
        #expect(name.first?.isWhitespace == false)
        #expect(name != "." && name != "..")
        let forbidden: [Unicode.GeneralCategory] = [.control, .format, .lineSeparator, .paragraphSeparator, .privateUse]
        #expect(!name.unicodeScalars.contains { forbidden.contains($0.properties.generalCategory) })
    }

    // MARK: - Length cap

    @Test func maxBytesLeavesRoomForVariantsOnExt4() {
        #expect(FileNamer.maxBytes == 200)
        #expect(FileNamer.maxBytes + " (10000)".utf8.count <= 255)
    }

    struct Cut: Sendable, CustomTestStringConvertible {
        var raw: String
        var expected: String
        var bytes: Int
        var testDescription: String { "\(raw.utf8.count) bytes → \(bytes)" }
    }

    @Test(arguments: [
        // At the cap: unchanged. One over: the stem is cut, the extension survives.
        Cut(raw: a196 + ".mp3", expected: a196 + ".mp3", bytes: 200),
        Cut(raw: a196 + "a.mp3", expected: a196 + ".mp3", bytes: 200),
        Cut(raw: String(repeating: "a", count: 300) + ".mp3", expected: a196 + ".mp3", bytes: 200),
        Cut(raw: String(repeating: "a", count: 300), expected: String(repeating: "a", count: 200), bytes: 200),
        // Multibyte: cut on character boundaries, never inside one.
        Cut(raw: String(repeating: "é", count: 150) + ".mp3", expected: String(repeating: "é", count: 98) + ".mp3", bytes: 200),
        Cut(raw: String(repeating: "日", count: 100) + ".flac", expected: String(repeating: "日", count: 65) + ".flac", bytes: 200),
        Cut(raw: String(repeating: "日", count: 100) + ".mp3", expected: String(repeating: "日", count: 65) + ".mp3", bytes: 199),
        Cut(raw: String(repeating: "🎧", count: 100) + ".m4a", expected: String(repeating: "🎧", count: 49) + ".m4a", bytes: 200),
        Cut(raw: String(repeating: "日", count: 100), expected: String(repeating: "日", count: 66), bytes: 198),
        Cut(
            raw: String(repeating: "e\u{301}", count: 100) + ".mp3",
            expected: String(repeating: "e\u{301}", count: 65) + ".mp3", bytes: 199
        ),
        // A ten-character extension of multibyte characters survives when it is short in bytes.
        Cut(
            raw: String(repeating: "a", count: 300) + "." + String(repeating: "é", count: 10),
            expected: String(repeating: "a", count: 179) + "." + String(repeating: "é", count: 10), bytes: 200
        ),
    ])
    func sanitizeCapsTheLength(_ cut: Cut) throws {
        let name = try #require(FileNamer.sanitize(cut.raw))
        #expect(name == cut.expected)
        #expect(name.utf8.count == cut.bytes)
    }

    @Test func truncatedKeepsWholeEmojiSequences() {
        let name = FileNamer.truncated(String(repeating: Self.family, count: 10) + ".mp3")
        #expect(name == String(repeating: Self.family, count: 7) + ".mp3")
        #expect(name.utf8.count == 179)
    }

    /// Ten characters can be hundreds of bytes; such an "extension" must not crowd out the stem
    /// (which left a hidden `.👨‍👩‍👧‍👦…` of 251 bytes).
    @Test func truncatedDropsAnExtensionTooLongInBytes() {
        let name = FileNamer.truncated("a." + String(repeating: Self.family, count: 10))
        #expect(name == "a." + String(repeating: Self.family, count: 7))
        #expect(name.utf8.count == 177)

        let accent = "e" + String(repeating: "\u{301}", count: 20)  // one Character, 41 bytes
        let sanitized = FileNamer.sanitize("a." + String(repeating: accent, count: 10))
        #expect(sanitized == "a." + String(repeating: accent, count: 4))
        #expect(sanitized?.utf8.count == 166)
    }

    /// A first character longer than the cap is cut inside (which left `.mp3`, or an empty name).
    @Test func truncatedCutsInsideAGiantFirstCharacter() throws {
        let giant = "e" + String(repeating: "\u{301}", count: 150)  // one Character, 301 bytes

        let withExt = try #require(FileNamer.sanitize(giant + ".mp3"))
        #expect(withExt == "e" + String(repeating: "\u{301}", count: 97) + ".mp3")
        #expect(withExt.utf8.count == 199)

        let bare = try #require(FileNamer.sanitize(giant))
        #expect(bare == "e" + String(repeating: "\u{301}", count: 99))
        #expect(bare.utf8.count == 199)
    }

    @Test(arguments: [0, 1, 50, 200] as [Int])
    func truncatedLeavesShortNamesAlone(_ count: Int) {
        let name = String(repeating: "x", count: count)
        #expect(FileNamer.truncated(name) == name)
    }

    // MARK: - split

    @Test(arguments: [
        ("a.b.mp3", "a.b", "mp3"),
        ("song.MP3", "song", "MP3"),
        ("a.tar.gz", "a.tar", "gz"),
        ("file.abcdefghij", "file", "abcdefghij"),  // ten characters: an extension
        ("photo.日本", "photo", "日本"),
        ("README", "README", nil),
        (".bashrc", ".bashrc", nil),
        ("name.", "name.", nil),
        ("file.abcdefghijk", "file.abcdefghijk", nil),  // eleven: not an extension
        ("v1.0 final", "v1.0 final", nil),  // spaces: not an extension
        ("a.\tb", "a.\tb", nil),
        ("", "", nil),
    ] as [(String, String, String?)])
    func split(_ name: String, _ stem: String, _ ext: String?) {
        let result = FileNamer.split(name)
        #expect(result.stem == stem)
        #expect(result.ext == ext)
    }

    // MARK: - name(contentDisposition:url:suggested:contentType:)

    struct Naming: Sendable, CustomTestStringConvertible {
        var contentDisposition: String?
        var url: String?
        var suggested: String?
        var contentType: String?
        var expected: String
        var testDescription: String { expected }
    }

    @Test(arguments: [
        // Content-Disposition first, then the URL, then the suggestion, then "download".
        Naming(contentDisposition: #"attachment; filename="cd.mp3""#, url: "https://e.com/u.mp3", suggested: "s.mp3", expected: "cd.mp3"),
        Naming(contentDisposition: "attachment", url: "https://e.com/u.mp3", suggested: "s.mp3", expected: "u.mp3"),
        Naming(contentDisposition: nil, url: "https://e.com/path/Episode%2042.mp3?token=x#t", suggested: "s.mp3", expected: "Episode 42.mp3"),
        Naming(contentDisposition: nil, url: "https://e.com/", suggested: "Suggested.mp3", expected: "Suggested.mp3"),
        Naming(contentDisposition: nil, url: "https://e.com", suggested: "Suggested.mp3", expected: "Suggested.mp3"),
        Naming(contentDisposition: nil, url: nil, suggested: "Suggested.mp3", expected: "Suggested.mp3"),
        Naming(contentDisposition: nil, url: nil, suggested: nil, expected: "download"),
        Naming(contentDisposition: nil, url: nil, suggested: "", expected: "download"),
        Naming(contentDisposition: nil, url: "https://e.com/", suggested: "  ", expected: "download"),
        Naming(contentDisposition: nil, url: "https://e.com/podcasts/", suggested: nil, expected: "podcasts"),
        // Hostile names are sanitised; one that sanitises to nothing falls through to the next source.
        Naming(contentDisposition: #"attachment; filename="../../etc/passwd""#, url: "https://e.com/u.mp3", expected: "passwd"),
        Naming(contentDisposition: "attachment; filename*=UTF-8''..%2F..%2F.ssh%2Fauthorized_keys", expected: "authorized_keys"),
        Naming(contentDisposition: "attachment; filename*=UTF-8''a%E2%80%AE3pm.exe", expected: "a3pm.exe"),
        Naming(contentDisposition: #"attachment; filename="..""#, url: "https://e.com/u.mp3", expected: "u.mp3"),
        Naming(contentDisposition: #"attachment; filename="/""#, url: "https://e.com/u.mp3", expected: "u.mp3"),
        Naming(contentDisposition: #"attachment; filename=".""#, url: "https://e.com/..", suggested: "s.mp3", expected: "s.mp3"),
        Naming(contentDisposition: nil, url: "https://e.com/x/%2E%2E", suggested: "s.mp3", expected: "s.mp3"),
        Naming(contentDisposition: nil, url: "https://e.com/a%2F..%2F..%2Fetc%2Fpasswd", expected: "passwd"),
        Naming(contentDisposition: nil, url: "https://e.com/%2Ebashrc", expected: "bashrc"),
        Naming(contentDisposition: nil, url: nil, suggested: "../../Show: Episode 1?", expected: "Show: Episode 1?"),
        // The extension comes from Content-Type when the name has none.
        Naming(contentDisposition: nil, url: nil, suggested: nil, contentType: "audio/mpeg", expected: "download.mp3"),
        Naming(contentDisposition: nil, url: nil, suggested: "Episode 1", contentType: "audio/mp4; codecs=mp4a", expected: "Episode 1.m4a"),
        Naming(contentDisposition: nil, url: "https://e.com/stream", contentType: "AUDIO/MPEG", expected: "stream.mp3"),
        Naming(contentDisposition: nil, url: "https://e.com/file.ogg", contentType: "audio/mpeg", expected: "file.ogg"),
        Naming(contentDisposition: nil, url: "https://e.com/stream", contentType: "application/octet-stream", expected: "stream"),
        Naming(contentDisposition: nil, url: "https://e.com/v1.0 final", contentType: "video/mp4", expected: "v1.0 final.mp4"),
        Naming(contentDisposition: #"attachment; filename=".hidden""#, contentType: "text/plain", expected: "hidden.txt"),
    ])
    func name(_ naming: Naming) {
        let name = FileNamer.name(
            contentDisposition: naming.contentDisposition, url: naming.url.flatMap { URL(string: $0) },
            suggested: naming.suggested, contentType: naming.contentType
        )
        #expect(name == naming.expected)
    }

    @Test func nameCapsLengthAndKeepsTheContentTypeExtension() {
        let name = FileNamer.name(
            contentDisposition: nil, url: nil, suggested: String(repeating: "b", count: 198), contentType: "audio/mpeg"
        )
        #expect(name == String(repeating: "b", count: 196) + ".mp3")
        #expect(name.utf8.count == 200)
    }

    @Test func nameCapsAVeryLongMultibyteContentDisposition() throws {
        // 300 × "日" (900 bytes) percent-encoded in filename*, plus ".mp3".
        let encoded = String(repeating: "%E6%97%A5", count: 300) + ".mp3"
        let name = FileNamer.name(
            contentDisposition: "attachment; filename*=UTF-8''\(encoded)", url: nil, suggested: nil, contentType: nil
        )
        #expect(name == String(repeating: "日", count: 65) + ".mp3")
        #expect(name.utf8.count == 199)
    }

    // MARK: - variant

    @Test(arguments: [
        ("song.mp3", 2, "song (2).mp3"),
        ("song.mp3", 10, "song (10).mp3"),
        ("song.mp3", 10_000, "song (10000).mp3"),
        ("README", 3, "README (3)"),
        ("a.tar.gz", 2, "a.tar (2).gz"),
        ("v1.0 final", 2, "v1.0 final (2)"),
        ("日本.flac", 2, "日本 (2).flac"),
        ("song.mp3", 1, "song.mp3"),
        ("song.mp3", 0, "song.mp3"),
        ("song.mp3", -5, "song.mp3"),
    ])
    func variant(_ name: String, _ number: Int, _ expected: String) {
        #expect(FileNamer.variant(of: name, number: number) == expected)
    }

    /// A name at the cap must still get distinct variants: cutting `name (2).mp3` back to the cap
    /// gave `name.mp3` again, so LibraryFolder.place could never find a free name.
    @Test(arguments: [
        a196 + ".mp3",
        String(repeating: "a", count: 200),
        String(repeating: "日", count: 65) + ".mp3",
        String(repeating: "🎧", count: 49) + ".m4a",
    ])
    func variantsOfNamesAtTheCapStayDistinct(_ name: String) {
        let variants = (1...1000).map { FileNamer.variant(of: name, number: $0) }
        #expect(Set(variants).count == 1000)
        #expect(variants[0] == name)
        #expect(variants[1].hasPrefix(String(FileNamer.split(name).stem) + " (2)"))
        #expect(variants.allSatisfy { $0.utf8.count <= 255 })
        #expect(FileNamer.variant(of: name, number: 10_000).utf8.count <= 255)
        if let ext = FileNamer.split(name).ext {
            #expect(variants.allSatisfy { $0.hasSuffix("." + ext) })
        }
    }

    @Test func variantOfAMaximalName() {
        #expect(FileNamer.variant(of: Self.a196 + ".mp3", number: 2) == Self.a196 + " (2).mp3")
    }

    // MARK: - fileExtension(forContentType:)

    @Test(arguments: [
        ("audio/mpeg", "mp3"),
        ("AUDIO/MPEG", "mp3"),
        ("Audio/Mpeg; charset=binary", "mp3"),
        ("  video/mp4 ;codecs=avc1", "mp4"),
        ("audio/mp4", "m4a"),
        ("audio/x-m4a", "m4a"),
        ("audio/flac", "flac"),
        ("video/quicktime", "mov"),
        ("image/jpeg", "jpg"),
        ("application/rss+xml", "xml"),
        ("text/plain; charset=utf-8", "txt"),
        ("application/gzip", "gz"),
    ])
    func fileExtension(_ contentType: String, _ expected: String) {
        #expect(FileNamer.fileExtension(forContentType: contentType) == expected)
    }

    @Test(arguments: [
        "", ";", " ", "application/octet-stream", "audio", "audio/", "mpeg", "audio/mpeg3", "audio/mpeg+x",
        "audio / mpeg", "audio/mpeg\u{0}", "text/plain,audio/mpeg", "../mp3",
    ])
    func noFileExtension(_ contentType: String) {
        #expect(FileNamer.fileExtension(forContentType: contentType) == nil)
    }

    @Test func everyMappedExtensionIsASafeExtension() {
        for (type, ext) in FileNamer.extensions {
            #expect(FileNamer.fileExtension(forContentType: type.uppercased() + "; q=1") == ext)
            #expect(FileNamer.split("x.\(ext)").ext == ext, "\(type) → \(ext)")
            #expect(FileNamer.sanitize(ext) == ext)
            #expect(ext == ext.lowercased() && !ext.contains("."))
        }
    }
}
