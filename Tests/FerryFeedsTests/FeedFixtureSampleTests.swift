import Foundation
import Testing

@testable import FerryFeeds

/// A sample of the gofeed corpus, checked by hand: exact values, including what the gofeed
/// comparison cannot see (descriptions as HTML, formats, substitute guids).
@Suite struct FeedFixtureSampleTests {
    @Test func bareAmpersandsAndEntitiesAfterThem() throws {
        // `Fish & Chips &amp; more &lt;3`: the bare `&` is repaired, the rest still decode.
        let feed = try FeedFixtures.parse("gofeed-rss/issue_305_bare_ampersand")
        #expect(feed.title == "Fish & Chips & more <3")
        #expect(feed.format == .rss)
    }

    @Test func legacyEntityNamesWithoutSemicolonStayAsWritten() throws {
        let feed = try FeedFixtures.parse("gofeed-rss/issue_320_legacy_entity_prefix")
        #expect(feed.title == "?page=1&copy=2;mode=x & done")
    }

    @Test func netscapeDoctypeIsRemovedNotFetched() throws {
        let feed = try FeedFixtures.parse("gofeed-rss/version_rss_091_netscape")
        #expect(feed == Feed(format: .rss))
    }

    @Test func illegalControlCharacterIsDropped() throws {
        let feed = try FeedFixtures.parse("gofeed-rss/rss_channel_item_illegal_char")
        #expect(feed.episodes.map(\.title) == ["abcd"])
    }

    @Test func undeclaredItunesPrefixStillCounts() throws {
        // `<itunes:summary>` with no xmlns:itunes; multi-line CDATA; plain text, not HTML.
        let episode = try #require(try FeedFixtures.parse("gofeed-rss/itunes_item_summary_cdata_multi").episodes.first)
        #expect(episode.descriptionText == "Line 1\nLine 2\nLine 3")
        #expect(episode.descriptionHTML == "<p>Line 1<br>Line 2<br>Line 3</p>")
        #expect(episode.guid == EpisodeBuilder.substituteGUID(enclosure: nil, link: nil, title: "", published: nil))
    }

    @Test func namespaceURIWithSpacesAndOddCase() throws {
        let feed = try FeedFixtures.parse("gofeed-rss/issue_309_namespace_whitespace")
        #expect(feed.author == "Example Author")
    }

    @Test func enclosureAttributesAndChildren() throws {
        let plain = try #require(try FeedFixtures.parse("gofeed-rss/rss_channel_item_enclosure").episodes.first)
        #expect(plain.enclosures == [.init(url: "http://example.org/podcast.mp3", length: 123_456, type: "audio/mpeg")])
        #expect(plain.primaryEnclosure == plain.enclosures.first)
        // Media RSS children of an enclosure are not the item's.
        let nested = try #require(try FeedFixtures.parse("gofeed-rss/issue_217_enclosure_children").episodes.first)
        #expect(nested.enclosures == [.init(url: "http://example.org/enclosure.jpg", type: "image/jpeg")])
        #expect(nested.title == "")
        #expect(nested.primaryEnclosure?.url == "http://example.org/enclosure.jpg")
    }

    @Test func rssXMLBase() throws {
        let feed = try FeedFixtures.parse("gofeed-rss/rss_channel_item_xml_base")
        #expect(feed.title == "t")
        #expect(feed.artworkURL?.absoluteString == "http://example.org/feeds/logo.png")
        #expect(feed.episodes.first?.link == "http://example.org/feeds/post/1")
    }

    @Test func atomXHTMLContentWithInheritedBase() throws {
        let episode = try #require(try FeedFixtures.parse("gofeed-atom/entry_content_xml_base_inherit_3").episodes.first)
        #expect(
            episode.descriptionHTML == #"Example <a href="http://example.com/test/test.html" rel="noopener noreferrer">test</a>"#)
        #expect(episode.descriptionText == "Example test")
    }

    @Test func atom03DatesAndBase64() throws {
        let issued = try FeedFixtures.parse("gofeed-atom/atom03_feed_entry_issued")
        #expect(issued.format == .atom)
        #expect(issued.episodes.first?.published == FeedFixtures.date("2014-07-06T12:56:00Z"))
        #expect(try FeedFixtures.parse("gofeed-atom/atom03_feed_title_base64").title == "Feed Title")
        #expect(try FeedFixtures.parse("gofeed-atom/atom10_feed_title_base64").title == "Feed Title")
    }

    @Test func rdfItemsBesideTheChannel() throws {
        let feed = try FeedFixtures.parse("gofeed-rss/rdf_item_links")
        #expect(feed.format == .rdf)
        #expect(feed.episodes.map(\.link) == ["http://example.org"])
    }

    @Test func atomSourceAndContentTypes() throws {
        let feed = try FeedFixtures.parse("gofeed-atom/issue_275_extensions_and_source")
        #expect(feed.title == "t")
        #expect(feed.author == "Feed Creator")
        #expect(feed.episodes.map(\.title) == ["e1", "e2", "e3", "e4"])
        #expect(feed.episodes.map(\.descriptionText) == ["", "hello", #"{"a":1}"#, "<x/>"])
        #expect(feed.episodes[3].author == "An Author")
        #expect(feed.episodes[0].author == nil)
    }

    @Test func brokenEndTagKeepsWhatWasRead() throws {
        // `<language>en-us</langauge>`: libxml2 stops, the language was read.
        let feed = try FeedFixtures.parse("gofeed-rss/rss_channel_language")
        #expect(feed.language == "en-us")
    }

    @Test func imageAndTextInputTitlesAreNotTheFeedTitle() throws {
        #expect(try FeedFixtures.parse("gofeed-rss/rss_channel_image").title == "")
        #expect(try FeedFixtures.parse("gofeed-rss/rss_channel_image").artworkURL?.absoluteString == "http://example.org/url")
        #expect(try FeedFixtures.parse("gofeed-rss/rss_channel_textInput").title == "")
        #expect(try FeedFixtures.parse("gofeed-atom/atom10_feed_entry_source_title").episodes.map(\.title) == [""])
    }
}
