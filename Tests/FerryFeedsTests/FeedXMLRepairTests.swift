import Foundation
import Testing

@testable import FerryFeeds

/// The byte pass before parsing (``XMLRepair``): what it refuses, repairs and leaves alone.
@Suite struct FeedXMLRepairTests {
    static func repaired(_ text: String) throws -> String {
        String(decoding: try XMLRepair.prepare(Data(text.utf8)), as: UTF8.self)
    }

    static func repaired(_ bytes: [UInt8]) throws -> [UInt8] {
        [UInt8](try XMLRepair.prepare(Data(bytes)))
    }

    @Test(arguments: [
        // References: XML ones kept, HTML ones made numeric, the rest escaped.
        ("a &amp; b &lt; &gt; &quot; &apos;", "a &amp; b &lt; &gt; &quot; &apos;"),
        ("&#233; &#xE9; &#XE9;", "&#233; &#xE9; &#XE9;"),
        ("Fish & Chips", "Fish &amp; Chips"),
        ("a&b", "a&amp;b"),
        ("&nbsp;&eacute;&mdash;&hellip;&rsquo;&copy;", "&#160;&#233;&#8212;&#8230;&#8217;&#169;"),
        ("&Eacute;&eacute;", "&#201;&#233;"),
        ("?page=1&copy=2;mode=x", "?page=1&amp;copy=2;mode=x"),
        ("&unknown; &; &#; &#x; &#12a;", "&amp;unknown; &amp;; &amp;#; &amp;#x; &amp;#12a;"),
        ("&#0;&#8;&#xFFFE;&#x110000;ok", "ok"),
        ("&#146;s &#150;", "&#8217;s &#8211;"),  // Windows-1252 numbers, as browsers read them
        (#"<enclosure url="http://x/a.mp3?a=1&b=2"/>"#, #"<enclosure url="http://x/a.mp3?a=1&amp;b=2"/>"#),
        // CDATA, comments and instructions are copied as they are.
        ("<![CDATA[a & b &nbsp; <p>]]>&", "<![CDATA[a & b &nbsp; <p>]]>&amp;"),
        ("<!-- & &nbsp; -->", "<!-- & &nbsp; -->"),
        ("<?xml-stylesheet href=\"a&b\"?>", "<?xml-stylesheet href=\"a&b\"?>"),
        // ...except one without data, which crashes XMLParser (found by tests/torture/fuzz).
        ("<rss><?xm?><?a:é?></rss>", "<rss></rss>"),
        ("<?a ?><??><?a?", "<?a ?><?a?"),
        // ...also one that starts where the look at another stopped, or that a dropped byte made.
        ("<?a<?b?>c", "<?ac"),
        ("x<\u{0}?<i<?xm?>y", "x<?<iy"),
        // Control characters XML forbids are dropped; tab, LF and CR stay.
        ("a\u{0}b\u{8}c\u{B}d\u{1F}e\tf\ng\rh", "abcde\tf\ng\rh"),
        ("<![CDATA[x\u{1}y]]>", "<![CDATA[xy]]>"),
        ("a\u{FFFE}b\u{FFFF}c\u{FEFF}d", "abc\u{FEFF}d"),
        // DOCTYPE naming only an external DTD: removed.
        (#"<!DOCTYPE rss SYSTEM "http://my.netscape.com/publish/formats/rss-0.91.dtd"><rss/>"#, "<rss/>"),
        (#"<!doctype html><html/>"#, "<html/>"),
        (#"<!DOCTYPE rss PUBLIC "-//x//[y]//EN" "http://x/y.dtd"><rss/>"#, "<rss/>"),  // `[` inside quotes
        // Nothing to repair.
        ("<rss><channel><title>Plain</title></channel></rss>", "<rss><channel><title>Plain</title></channel></rss>"),
        ("", ""),
    ])
    func repairs(_ input: String, _ output: String) throws {
        #expect(try Self.repaired(input) == output)
    }

    @Test(arguments: [
        (#"<!DOCTYPE rss [<!ENTITY a "b">]><rss/>"#, "its DOCTYPE has an internal subset, where entities are declared"),
        (#"<!DOCTYPE rss [ ]><rss/>"#, "its DOCTYPE has an internal subset, where entities are declared"),
        (#"<!doctype rss[<!ENTITY a "b">]><rss/>"#, "its DOCTYPE has an internal subset, where entities are declared"),
        (#"<rss><!ENTITY a "b"></rss>"#, "it contains an <!ENTITY> declaration"),
        (#"<rss><!entity a "b"></rss>"#, "it contains an <!ENTITY> declaration"),
    ])
    func refuses(_ input: String, _ reason: String) {
        #expect(throws: XMLRepair.Refusal(reason: reason)) { try XMLRepair.prepare(Data(input.utf8)) }
    }

    /// Entity declarations quoted in CDATA or comments are text, not declarations.
    @Test func entityTextInCDATAIsNotRefused() throws {
        let input = #"<rss><title><![CDATA[<!ENTITY x "y">]]></title><!-- <!DOCTYPE x [ ]> --></rss>"#
        #expect(try Self.repaired(input) == input)
    }

    @Test func invalidUTF8BecomesReplacementCharacters() throws {
        let input: [UInt8] = Array("<t>a".utf8) + [0xFF, 0xC3, 0x28, 0xE2, 0x82, 0xED, 0xA0, 0x80, 0xF4, 0x90, 0x80, 0x80] + Array("z</t>".utf8)
        let fffd: [UInt8] = [0xEF, 0xBF, 0xBD]
        // Each maximal ill-formed subsequence becomes one U+FFFD (Unicode §3.9).
        let expected = Array("<t>a".utf8) + fffd + fffd + [0x28] + fffd + fffd + fffd + fffd + fffd + fffd + fffd + fffd
            + Array("z</t>".utf8)
        #expect(try Self.repaired(input) == expected)
    }

    @Test func byteOrderMarkIsDropped() throws {
        #expect(try Self.repaired([0xEF, 0xBB, 0xBF] + Array("<rss/>".utf8)) == Array("<rss/>".utf8))
    }

    /// Only an XML declaration (`<?xml` and a blank) names the encoding: a stylesheet instruction
    /// at the start does not, whatever pseudo-attributes it carries.
    @Test func aLeadingStylesheetInstructionNamesNoEncoding() throws {
        let text = #"<?xml-stylesheet type="text/xsl" href="s.xsl" encoding="ISO-8859-1"?><t>café</t>"#
        #expect(try Self.repaired(text) == text)
    }

    @Test func latin1AndWindows1252AreTranscoded() throws {
        let latin1: [UInt8] = Array(#"<?xml version="1.0" encoding="ISO-8859-1"?><t>caf"#.utf8) + [0xE9, 0x20, 0x93, 0x71, 0x94]
            + Array("</t>".utf8)
        #expect(try Self.repaired(latin1) == Array("<t>café “q”</t>".utf8))
        let windows: [UInt8] = Array(#"<?xml version='1.0' encoding='windows-1252'?><t>"#.utf8) + [0x80, 0x81] + Array("</t>".utf8)
        #expect(try Self.repaired(windows) == Array("<t>€\u{FFFD}</t>".utf8))
    }

    @Test func utf16IsTranscoded() throws {
        let text = #"<?xml version="1.0" encoding="UTF-16"?><rss><channel><title>Ünï &amp; ok</title></channel></rss>"#
        for bigEndian in [true, false] {
            var bytes: [UInt8] = bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]
            for unit in text.utf16 {
                bytes += bigEndian ? [UInt8(unit >> 8), UInt8(unit & 0xFF)] : [UInt8(unit & 0xFF), UInt8(unit >> 8)]
            }
            #expect(try Self.repaired(bytes) == Array("<rss><channel><title>Ünï &amp; ok</title></channel></rss>".utf8))
            #expect(try FeedParser.parse(Data(bytes), url: nil).title == "Ünï & ok")
        }
    }

    /// Every other declared encoding is converted here, so that libxml2 decodes nothing and the
    /// checks see what it will see.
    @Test func otherEncodingsAreTranscoded() throws {
        let koi8 = Array(#"<?xml version="1.0" encoding="KOI8-R"?><rss><channel><title>"#.utf8) + [0xF0, 0xD2, 0xC9]
            + Array(" & x</title></channel></rss>".utf8)
        #expect(try Self.repaired(koi8) == Array("<rss><channel><title>При &amp; x</title></channel></rss>".utf8))
        #expect(try FeedParser.parse(Data(koi8), url: nil).title == "При & x")
    }

    /// UTF-7 spells `<` as `+ADw-`: decoded by libxml2, markup hid from every byte check. An
    /// instruction without data crashed XMLParser (SIGSEGV, the whole process); a DOCTYPE with
    /// entities was not refused.
    @Test func markupHiddenByAnEncodingIsSeen() throws {
        let head = #"<?xml version="1.0" encoding="UTF-7"?><rss version="2.0"><channel><title>x</title>"#
        let instruction = head + "+ADw-?xm?+AD4-<item><title>a</title></item></channel></rss>"
        #expect(try Self.repaired(instruction) == #"<rss version="2.0"><channel><title>x</title><item><title>a</title></item></channel></rss>"#)
        #expect(try FeedParser.parse(Data(instruction.utf8), url: nil).episodes.count == 1)
        let doctype = #"<?xml version="1.0" encoding="UTF-7"?>+ADw-!DOCTYPE rss +AFs-+ADw-!ENTITY a "x"+AD4-+AF0-+AD4-<rss/>"#
        #expect(throws: XMLRepair.Refusal.self) { try XMLRepair.prepare(Data(doctype.utf8)) }
    }

    /// A label the bytes do not match is dropped and the bytes are read as UTF-8: a declaration
    /// that does not read as itself in the declared encoding, a name iconv does not know, and any
    /// declaration after a UTF-8 BOM.
    @Test(arguments: [
        ([], #"<?xml version="1.0" encoding="UTF-16"?>"#),
        ([], #"<?xml version="1.0" encoding="UTF-32"?>"#),
        ([], #"<?xml version="1.0" encoding="IBM037"?>"#),
        ([], #"<?xml version="1.0" encoding="x-no-such-encoding"?>"#),
        ([0xEF, 0xBB, 0xBF], #"<?xml version="1.0" encoding="UTF-7"?>"#),
    ] as [([UInt8], String)])
    func mislabelledDocumentsAreReadAsUTF8(bom: [UInt8], declaration: String) throws {
        let body = "<rss><channel><title>Café +ADw-b</title></channel></rss>"
        #expect(try Self.repaired(bom + Array((declaration + body).utf8)) == Array(body.utf8))
        #expect(try FeedParser.parse(Data(bom + Array((declaration + body).utf8)), url: nil).title == "Café +ADw-b")
    }

    /// What libxml2 reads before the document, a BOM and an XML declaration, never reaches it,
    /// however it got to the start: it could name an encoding libxml2 would then decode (a UTF-7
    /// declaration behind NUL bytes, which the repair drops, was found by fuzzing).
    @Test(arguments: [
        ("\u{0}\u{0}<?xml version=\"1.0\" encoding=\"UTF-7\"?><rss>+ADw-?a?+AD4-</rss>", "<rss>+ADw-?a?+AD4-</rss>"),
        ("<?xml version=\"1.0\"" + String(repeating: " ", count: 600) + "encoding=\"UTF-7\"?><rss/>", "<rss/>"),
        ("<?xml version=\"1.0\"?>\u{FEFF}<?xml encoding=\"UTF-7\"?>\n<rss/>", "\n<rss/>"),
        ("<?a?><?xml\tencoding='UTF-7'><rss/>", "<rss/>"),  // a broken one: through its first `>`
        ("<?xml version=\"1.0\"", ""),
        ("<?xml-stylesheet href=\"s.xsl\"?><rss/>", "<?xml-stylesheet href=\"s.xsl\"?><rss/>"),
        ("<rss/><?xml version=\"1.0\"?>", "<rss/><?xml version=\"1.0\"?>"),
    ])
    func leadingDeclarationsAreRemoved(_ input: String, _ output: String) throws {
        #expect(try Self.repaired(input) == output)
    }

    /// What iconv cannot read becomes U+FFFD: a byte that starts nothing, and a sequence cut off
    /// by the end; a stateful encoding's last sequence is ended.
    @Test func transcodingReplacesWhatItCannotRead() throws {
        #expect(XMLRepair.transcode([0x41, 0x80, 0x42], from: "ISO-2022-JP") == Array("A\u{FFFD}B".utf8))
        #expect(XMLRepair.transcode([0x41, 0x82], from: "SHIFT_JIS") == Array("A\u{FFFD}".utf8))
        #expect(XMLRepair.transcode(Array("+ZeVnLIqe-".utf8), from: "UTF-7") == Array("日本語".utf8))
        #expect(XMLRepair.transcode([], from: "KOI8-R") == [])
        #expect(XMLRepair.transcode([0x41], from: "x-no-such-encoding") == nil)
    }

    /// A clean document is returned as it came, not copied.
    @Test func cleanDocumentIsUnchanged() throws {
        let data = Data(#"<rss version="2.0"><channel><title>Café ☕</title></channel></rss>"#.utf8)
        #expect(try XMLRepair.prepare(data) == data)
    }
}
