import FerryKit
import Foundation
import Testing

@testable import FerryFeeds

/// Hostile and broken documents (DESIGN: "XML is parsed with the streaming XMLParser, external
/// entities off, DOCTYPE refused, sizes capped").
@Suite struct FeedParserSecurityTests {
    static let feedURL = URL(string: "https://example.com/shows/ferry/feed.xml")!
    /// `Fuzz/Seeds/FuzzFeedParser`: inputs the fuzzer found, kept as seeds.
    static let seeds = FeedFixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Seeds/FuzzFeedParser")

    static func error(_ xml: String, maximumBytes: Int = 64 << 20) -> FerryError? {
        error(Data(xml.utf8), maximumBytes: maximumBytes)
    }

    static func error(_ data: Data, maximumBytes: Int = 64 << 20) -> FerryError? {
        do {
            _ = try FeedParser.parse(data, url: feedURL, maximumBytes: maximumBytes)
            return nil
        } catch {
            return error
        }
    }

    static let billionLaughs = """
        <?xml version="1.0"?>
        <!DOCTYPE rss [
          <!ENTITY lol "lol">
          <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
          <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
          <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
          <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
          <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
          <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
          <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
          <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
          <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
        ]>
        <rss version="2.0"><channel><title>&lol9;</title></channel></rss>
        """

    @Test(.timeLimit(.minutes(1)))
    func billionLaughsIsRefused() throws {
        let error = try #require(Self.error(Self.billionLaughs))
        #expect(error.code == .feedInvalid)
        #expect(
            error.message
                == "The feed was refused: its DOCTYPE has an internal subset, where entities are declared. Ferry never "
                + "reads DOCTYPE or entity declarations, because they can expand into gigabytes of text or read local "
                + "files; ask the publisher to remove them.")
    }

    @Test func externalEntityIsRefusedAndNothingIsRead() throws {
        let xxe = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <rss version="2.0"><channel><title>&xxe;</title><item><title>&xxe;</title></item></channel></rss>
            """
        let error = try #require(Self.error(xxe))
        #expect(error.code == .feedInvalid)
        #expect(error.message.hasPrefix("The feed was refused: its DOCTYPE has an internal subset"))
        #expect(!error.message.contains("root:"))
    }

    /// An entity declaration outside a DOCTYPE is not XML, and refused all the same.
    @Test func strayEntityDeclarationIsRefused() throws {
        let error = try #require(Self.error(#"<rss><!ENTITY x "y"><channel><title>t</title></channel></rss>"#))
        #expect(error.code == .feedInvalid)
        #expect(error.message.hasPrefix("The feed was refused: it contains an <!ENTITY> declaration."))
    }

    /// Without a DOCTYPE, an undeclared entity is text, never a file.
    @Test func undeclaredEntityReferenceStaysText() throws {
        let feed = try FeedParser.parse(Data(#"<rss><channel><title>&xxe; &nbsp;x</title></channel></rss>"#.utf8), url: nil)
        #expect(feed.title == "&xxe; x")
    }

    /// A DOCTYPE naming an external DTD is dropped unread, whatever it names.
    @Test func externalDTDIsNeverFetched() throws {
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE rss SYSTEM "file:///etc/passwd">
            <rss version="0.91"><channel><title>Netscape</title></channel></rss>
            """
        let feed = try FeedParser.parse(Data(xml.utf8), url: nil)
        #expect(feed.title == "Netscape")
    }

    /// A processing instruction without data crashed the process inside XMLParser (strlen of
    /// NULL): the input tests/torture/fuzz found (Fuzz/Seeds/FuzzFeedParser/), and OPML's too.
    @Test func instructionWithoutDataIsDropped() throws {
        let xml = """
            <?xm?>
            <!DOCTYPE rss SYSTEM "htt//:pmy.netsc>pe.com/publish/formats/rss-0.91.dtd">
            <rss version="0.91"><?a?><channel><title>Netscape</title></channel></rss>
            """
        let feed = try FeedParser.parse(Data(xml.utf8), url: nil)
        #expect(feed.title == "Netscape")
        _ = try? OPML.parse(Data(#"<opml version="2.0"><?a?><body/></opml>"#.utf8))
    }

    /// Every input fuzzing found that killed the process (tests/torture/fuzz; kept as seeds) is
    /// parsed or refused, and only UTF-8 is left for XMLParser. Garbled encoding names let bytes
    /// that are not UTF-8 through libxml2, and XMLParser trapped; `<?target?>` instructions hidden
    /// from the repair (or made by it, or decoded by libxml2 from UTF-7) met XMLParser's
    /// strlen(NULL); a date's number overflowed, and Swift traps on overflow.
    @Test func replaysEveryFuzzFoundInput() throws {
        for seed in ["crash-garbled-utf8-declaration.xml", "crash-garbled-encoding-name.xml", "crash-instruction-inside-no-instruction.xml",
                     "crash-instruction-inside-declaration.xml", "crash-instruction-after-dropped-byte.xml", "crash-utf7-instruction.xml",
                     "crash-declaration-behind-nul-bytes.xml", "crash-date-number-overflow.xml"] {
            let found = try Data(contentsOf: Self.seeds.appendingPathComponent(seed))
            _ = try? FeedParser.parse(found, url: nil)
            _ = try? OPML.parse(found)
            let repaired = try XMLRepair.prepare(found)
            #expect(String(validating: repaired, as: UTF8.self) != nil, "\(seed)")
        }
        #expect(XMLRepair.isEncodingName("Shift_JIS") && XMLRepair.isEncodingName("windows-1251"))
        #expect(!XMLRepair.isEncodingName("utf-\u{0f}8") && !XMLRepair.isEncodingName("8bit"))
    }

    @Test(.timeLimit(.minutes(3)))
    func twentyThousandEpisodes() throws {
        let data = Self.bigFeed(episodes: 20_000)
        #expect(data.count > 45_000_000)
        let feed = try FeedParser.parse(data, url: Self.feedURL)
        #expect(feed.episodes.count == 20_000)
        #expect(feed.episodes[19_999].guid == "urn:ferry:test:19999")
        #expect(feed.episodes[19_999].enclosures.first?.url == "https://cdn.example.com/show/19999.mp3")
        #expect(feed.episodes[0].descriptionText.hasPrefix("In this episode we talk about streaming parsers"))
    }

    @Test func episodesAfterTheMaximumAreSkipped() throws {
        let feed = try FeedParser.parse(Self.bigFeed(episodes: 5), url: nil, maximumEpisodes: 3)
        #expect(feed.episodes.map(\.guid) == ["urn:ferry:test:0", "urn:ferry:test:1", "urn:ferry:test:2"])
        #expect(feed.title == "Big")
    }

    /// About 2.5 kB an episode: show notes as HTML, a summary, the usual iTunes fields.
    static func bigFeed(episodes: Int) -> Data {
        let sentence = "In this episode we talk about streaming parsers, resumable downloads &amp; why feeds are messy. "
        let paragraph =
            "<p>" + String(repeating: sentence, count: 3)
            + "More at <a href=\"https://example.com/notes?id=1&amp;ref=feed\">the notes</a>.</p>\n"
        let notes = String(repeating: paragraph, count: 4)
        let summary = String(repeating: sentence, count: 6)
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" \
            xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>Big</title>

            """
        for index in 0..<episodes {
            xml += """
                <item><title>Episode \(index): Parsing feeds</title><guid isPermaLink="false">urn:ferry:test:\(index)</guid>\
                <pubDate>Wed, 01 May 2024 10:00:00 +0000</pubDate>\
                <enclosure url="https://cdn.example.com/show/\(index).mp3" length="48000000" type="audio/mpeg"/>\
                <itunes:duration>01:02:03</itunes:duration><itunes:episode>\(index)</itunes:episode>\
                <description>\(summary)</description><content:encoded><![CDATA[\(notes)]]></content:encoded></item>

                """
        }
        xml += "</channel></rss>\n"
        return Data(xml.utf8)
    }

    @Test func invalidUTF8BecomesReplacementCharacters() throws {
        var data = Data(#"<rss><channel><title>Caf"#.utf8)
        data += [0xE9, 0x20, 0xFF, 0xC3]  // Latin-1 é, a stray byte, a truncated sequence
        data += Data(#"!</title><item><title>ok</title></item></channel></rss>"#.utf8)
        let feed = try FeedParser.parse(data, url: nil)
        #expect(feed.title == "Caf\u{FFFD} \u{FFFD}\u{FFFD}!")
        #expect(feed.episodes.map(\.title) == ["ok"])
    }

    @Test func relativeEnclosuresResolveAgainstTheFeedURL() throws {
        let xml = #"<rss><channel><item><enclosure url="../../x" type="audio/mpeg"/></item></channel></rss>"#
        let feed = try FeedParser.parse(Data(xml.utf8), url: URL(string: "https://example.com/a/b/c/feed.xml")!)
        #expect(feed.episodes.first?.enclosures.first?.url == "https://example.com/a/x")
        // Without a feed URL there is nothing to resolve against: no enclosure rather than a guess.
        let unanchored = try FeedParser.parse(Data(xml.utf8), url: nil)
        #expect(unanchored.episodes.first?.enclosures == [])
    }

    @Test func scriptsInDescriptionsAreSanitised() throws {
        let xml = """
            <rss><channel><title>t</title><item>
            <description>&lt;p onclick="steal()"&gt;Hi&lt;script&gt;alert(document.cookie)&lt;/script&gt;&lt;/p&gt;\
            &lt;a href="javascript:alert(1)"&gt;x&lt;/a&gt;&lt;img src=x onerror=alert(1)&gt;</description>
            </item></channel></rss>
            """
        let episode = try #require(try FeedParser.parse(Data(xml.utf8), url: nil).episodes.first)
        #expect(episode.descriptionHTML == "<p>Hi</p>x")
        #expect(episode.descriptionText == "Hi\n\nx")
    }

    @Test func htmlPageIsNotAFeed() throws {
        let page = """
            <!DOCTYPE html>
            <html><head><title>My Podcast</title></head><body><p>Subscribe!</p></body></html>
            """
        let error = try #require(Self.error(page))
        #expect(error.code == .feedInvalid)
        #expect(
            error.message
                == "This is not an RSS or Atom feed: it is a web page (root element <html>); look on that page for "
                + "the podcast's RSS link.")
    }

    @Test func opmlIsNotAFeed() throws {
        let error = try #require(Self.error(#"<opml version="2.0"><body><outline text="x"/></body></opml>"#))
        #expect(error.code == .feedInvalid)
        #expect(
            error.message
                == "This is not an RSS or Atom feed: it is an OPML subscription list (root element <opml>); import it as OPML instead.")
    }

    @Test func otherXMLIsNotAFeed() throws {
        let error = try #require(Self.error(#"<svg xmlns="http://www.w3.org/2000/svg"></svg>"#))
        #expect(error.message == "This is not an RSS or Atom feed: its root element is <svg>, where a feed has <rss>, <rdf:RDF> or <feed>.")
    }

    @Test(arguments: [
        ("", "This is not an RSS or Atom feed: the document is empty. Check the feed's URL."),
        ("  \n\t ", "This is not an RSS or Atom feed: the document is empty. Check the feed's URL."),
        ("garbage", "This is not an RSS or Atom feed: it is not XML (line 1, column 1: no XML at all)."),
        ("{\"title\": \"json\"}", "This is not an RSS or Atom feed: it is not XML (line 1, column 1: no XML at all)."),
    ])
    func notXML(_ text: String, _ message: String) throws {
        let error = try #require(Self.error(text))
        #expect(error.code == .feedInvalid)
        #expect(error.message == message)
    }

    @Test func brokenBeforeAnythingUseful() throws {
        let error = try #require(Self.error("<rss><channel><title>Unfinished"))
        #expect(error.code == .feedInvalid)
        #expect(
            error.message
                == "The feed is broken: its XML stops making sense (line 1, column 32: the document ends too soon, or "
                + "goes on after its end) before a title, an episode or anything else of use. Ask the publisher to "
                + "check it with a feed validator.")
    }

    @Test func brokenAfterAnEpisodeKeepsIt() throws {
        let feed = try FeedParser.parse(
            Data("<rss><channel><item><title>One</title></item><item><title>Two</title></channel><bad".utf8), url: nil)
        #expect(feed.episodes.first?.title == "One")
    }

    @Test func overTheSizeLimit() throws {
        let data = Data(#"<rss><channel><title>too big</title></channel></rss>"#.utf8)
        let error = try #require(Self.error(data, maximumBytes: 40))
        #expect(error.code == .feedTooLarge)
        #expect(
            error.message
                == "The feed is 52 bytes, more than the limit of 40 bytes, so it was not read. Check that the URL is the "
                + "podcast's feed and not an episode's audio file.")
        #expect(Self.error(data, maximumBytes: 52) == nil)
    }
}
