import FerryKit
import Foundation
import Testing

@testable import FerryFeeds

@Suite struct FeedParserTests {
    static let feedURL = URL(string: "https://example.com/shows/ferry/feed.xml")!

    static func parse(_ xml: String, url: URL? = feedURL) throws -> Feed {
        try FeedParser.parse(Data(xml.utf8), url: url)
    }

    // MARK: - A podcast, every field

    static let podcast = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
             xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:podcast="https://podcastindex.org/namespace/1.0"
             xmlns:atom="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/">
          <channel>
            <title>Ferry &amp; Friends</title>
            <atom:link href="https://example.com/shows/ferry/feed.xml" rel="self" type="application/rss+xml"/>
            <link>https://example.com/shows/ferry/</link>
            <language>en-gb</language>
            <description><![CDATA[<p>A show about <b>transfers</b>.</p><script>alert(1)</script>]]></description>
            <itunes:author>The Ferry Crew</itunes:author>
            <itunes:summary>Plain summary</itunes:summary>
            <itunes:image href="art/cover.jpg"/>
            <itunes:explicit>false</itunes:explicit>
            <itunes:new-feed-url>https://feeds.example.net/ferry</itunes:new-feed-url>
            <itunes:owner><itunes:name>Ada Owner</itunes:name><itunes:email>ada@example.com</itunes:email></itunes:owner>
            <itunes:category text="Technology"><itunes:category text="Software"/></itunes:category>
            <podcast:guid>917393e3-1b1e-5cef-ace4-edaa54e1f810</podcast:guid>
            <image><url>https://example.com/rss-image.png</url><title>Not the show title</title></image>
            <item>
              <title>Episode 2: Resuming</title>
              <itunes:title>Resuming</itunes:title>
              <guid isPermaLink="false">ferry-ep-2</guid>
              <pubDate>Thu, 02 May 2024 08:30:00 -0400</pubDate>
              <link>episodes/2</link>
              <description>Short notes</description>
              <content:encoded><![CDATA[<p>Long <a href="/notes/2" onclick="x()">notes</a> &amp; more.</p><img src="https://t.example/pixel.gif">]]></content:encoded>
              <enclosure url="../media/ep2.mp3?x=1&amp;y=2" length="12345678" type="audio/mpeg"/>
              <enclosure url="https://example.com/media/ep2.pdf" length="100" type="application/pdf"/>
              <itunes:duration>1:02:03</itunes:duration>
              <itunes:season>1</itunes:season>
              <itunes:episode>2</itunes:episode>
              <itunes:episodeType>Full</itunes:episodeType>
              <itunes:explicit>yes</itunes:explicit>
              <itunes:image href="https://example.com/art/ep2.jpg"/>
              <itunes:author>Guest Host</itunes:author>
              <podcast:chapters url="https://example.com/ep2/chapters.json" type="application/json+chapters"/>
              <podcast:transcript url="https://example.com/ep2.vtt" type="text/vtt" language="en"/>
              <podcast:transcript url="https://example.com/ep2.srt" type="application/x-subrip"/>
            </item>
            <item>
              <title>Trailer</title>
              <enclosure url="https://example.com/media/trailer.m4a" type="audio/x-m4a"/>
              <itunes:episodeType>trailer</itunes:episodeType>
              <itunes:duration>95</itunes:duration>
              <pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate>
            </item>
          </channel>
        </rss>
        """

    @Test func readsEveryChannelField() throws {
        let feed = try Self.parse(Self.podcast)
        #expect(feed.format == .rss)
        #expect(feed.title == "Ferry & Friends")
        #expect(feed.author == "The Ferry Crew")
        #expect(feed.descriptionHTML == "<p>A show about <b>transfers</b>.</p>")
        #expect(feed.descriptionText == "A show about transfers.")
        #expect(feed.artworkURL?.absoluteString == "https://example.com/shows/ferry/art/cover.jpg")
        #expect(feed.link?.absoluteString == "https://example.com/shows/ferry/")
        #expect(feed.newFeedURL?.absoluteString == "https://feeds.example.net/ferry")
        #expect(feed.language == "en-gb")
        #expect(feed.explicit == false)
        #expect(feed.ownerName == "Ada Owner")
        #expect(feed.ownerEmail == "ada@example.com")
        #expect(feed.podcastGUID == "917393e3-1b1e-5cef-ace4-edaa54e1f810")
        #expect(feed.episodes.count == 2)
    }

    @Test func readsEveryEpisodeField() throws {
        let episode = try #require(try Self.parse(Self.podcast).episodes.first)
        #expect(episode.guid == "ferry-ep-2")
        #expect(episode.title == "Episode 2: Resuming")
        #expect(episode.published == FeedFixtures.date("2024-05-02T12:30:00Z"))
        #expect(episode.duration == 3723)
        #expect(
            episode.enclosures == [
                FeedEpisode.Enclosure(
                    url: "https://example.com/shows/media/ep2.mp3?x=1&y=2", length: 12_345_678,
                    type: "audio/mpeg"),
                FeedEpisode.Enclosure(url: "https://example.com/media/ep2.pdf", length: 100, type: "application/pdf"),
            ])
        #expect(episode.primaryEnclosure?.url == "https://example.com/shows/media/ep2.mp3?x=1&y=2")
        #expect(
            episode.descriptionHTML
                == #"<p>Long <a href="https://example.com/notes/2" rel="noopener noreferrer">notes</a> &amp; more.</p>"#)
        #expect(episode.descriptionText == "Long notes & more.")
        #expect(episode.season == 1)
        #expect(episode.episodeNumber == 2)
        #expect(episode.episodeType == .full)
        #expect(episode.explicit == true)
        #expect(episode.link == "https://example.com/shows/ferry/episodes/2")
        #expect(episode.artworkURL == "https://example.com/art/ep2.jpg")
        #expect(episode.chaptersURL == "https://example.com/ep2/chapters.json")
        #expect(
            episode.transcripts == [
                FeedEpisode.Transcript(url: "https://example.com/ep2.vtt", type: "text/vtt", language: "en"),
                FeedEpisode.Transcript(url: "https://example.com/ep2.srt", type: "application/x-subrip"),
            ])
        #expect(episode.author == "Guest Host")
    }

    @Test func missingFieldsAreEmptyNotErrors() throws {
        let trailer = try Self.parse(Self.podcast).episodes[1]
        #expect(trailer.episodeType == .trailer)
        #expect(trailer.duration == 95)
        #expect(trailer.published == FeedFixtures.date("2024-05-01T10:00:00Z"))
        #expect(trailer.descriptionHTML == "")
        #expect(trailer.descriptionText == "")
        #expect(trailer.season == nil)
        #expect(trailer.episodeNumber == nil)
        #expect(trailer.explicit == nil)
        #expect(trailer.link == nil)
        #expect(trailer.artworkURL == nil)
        #expect(trailer.chaptersURL == nil)
        #expect(trailer.transcripts == [])
        #expect(trailer.author == nil)
        // No guid: a substitute from the enclosure URL as written.
        #expect(
            trailer.guid
                == EpisodeBuilder.substituteGUID(
                    enclosure: "https://example.com/media/trailer.m4a", link: nil, title: "Trailer", published: nil))
    }

    @Test func feedCodableRoundTrips() throws {
        let feed = try Self.parse(Self.podcast)
        let decoded = try JSONDecoder().decode(Feed.self, from: JSONEncoder().encode(feed))
        #expect(decoded == feed)
    }

    /// Feeds declare odd default namespaces; the root's counts as the format's own.
    @Test func oddDefaultNamespace() throws {
        let rss = try Self.parse(#"<rss xmlns="http://purl.org/rss/2.0/"><channel><title>Odd</title><item><title>i</title></item></channel></rss>"#)
        #expect(rss.title == "Odd")
        #expect(rss.episodes.map(\.title) == ["i"])
        let atom = try Self.parse(#"<feed xmlns="urn:not-atom"><title>A</title><entry><id>e</id></entry></feed>"#)
        #expect(atom.format == .atom)
        #expect(atom.title == "A")
        #expect(atom.episodes.map(\.guid) == ["e"])
    }

    /// Namespaces are matched by URI: an element with the iTunes prefix but another URI is not
    /// iTunes', and the iTunes URI under another prefix is.
    @Test func namespacesByURINotPrefix() throws {
        let xml = """
            <rss xmlns:i="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:itunes="urn:impostor"><channel>
            <itunes:author>Impostor</itunes:author><i:author>Real</i:author>
            <item><i:duration>10:00</i:duration><itunes:duration>99</itunes:duration></item>
            </channel></rss>
            """
        let feed = try Self.parse(xml)
        #expect(feed.author == "Real")
        #expect(feed.episodes.first?.duration == 600)
    }

    @Test func atomPodcast() throws {
        let xml = """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom" xml:lang="fr" xml:base="https://example.org/podcast/">
              <title type="html">Le &lt;b&gt;Podcast&lt;/b&gt;</title>
              <subtitle>Sous-titre</subtitle>
              <link rel="self" href="feed.atom"/>
              <link rel="alternate" type="text/html" href="./"/>
              <logo>logo.png</logo>
              <author><name>Émile</name><email>e@example.org</email></author>
              <entry>
                <id>tag:example.org,2024:1</id>
                <title>Un</title>
                <updated>2024-05-02T08:00:00Z</updated>
                <published>2024-05-01T10:00:00+02:00</published>
                <link href="episodes/1"/>
                <link rel="enclosure" type="audio/ogg" length="42" href="media/1.ogg"/>
                <link rel="enclosure" type="audio/mpeg" href="https://cdn.example.org/1.mp3"/>
                <summary>Résumé</summary>
                <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Le <em>contenu</em></p></div></content>
              </entry>
            </feed>
            """
        let feed = try Self.parse(xml)
        #expect(feed.format == .atom)
        #expect(feed.title == "Le Podcast")
        #expect(feed.descriptionText == "Sous-titre")
        #expect(feed.link?.absoluteString == "https://example.org/podcast/")
        #expect(feed.artworkURL?.absoluteString == "https://example.org/podcast/logo.png")
        #expect(feed.author == "Émile")
        #expect(feed.language == "fr")
        let entry = try #require(feed.episodes.first)
        #expect(entry.guid == "tag:example.org,2024:1")
        #expect(entry.published == FeedFixtures.date("2024-05-01T08:00:00Z"))
        #expect(entry.link == "https://example.org/podcast/episodes/1")
        #expect(entry.enclosures.map(\.url) == ["https://example.org/podcast/media/1.ogg", "https://cdn.example.org/1.mp3"])
        #expect(entry.enclosures.first?.length == 42)
        #expect(entry.descriptionHTML == "<p>Le <em>contenu</em></p>")
        #expect(entry.descriptionText == "Le contenu")
    }

    @Test func rdfFeed() throws {
        let xml = """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
                     xmlns:dc="http://purl.org/dc/elements/1.1/">
              <channel rdf:about="https://example.com/"><title>RDF</title><link>https://example.com/</link>
                <description>Old &amp; good</description><dc:language>de</dc:language></channel>
              <item rdf:about="https://example.com/1"><title>One</title><link>https://example.com/1</link>
                <dc:date>2024-05-01T10:00:00Z</dc:date><dc:creator>Ann</dc:creator></item>
              <item rdf:about="https://example.com/2"><title>Two</title></item>
            </rdf:RDF>
            """
        let feed = try Self.parse(xml)
        #expect(feed.format == .rdf)
        #expect(feed.title == "RDF")
        #expect(feed.descriptionText == "Old & good")
        #expect(feed.language == "de")
        #expect(feed.episodes.map(\.title) == ["One", "Two"])
        #expect(feed.episodes[0].published == FeedFixtures.date("2024-05-01T10:00:00Z"))
        #expect(feed.episodes[0].author == "Ann")
        #expect(feed.episodes[0].guid == EpisodeBuilder.substituteGUID(enclosure: nil, link: "https://example.com/1", title: "One", published: nil))
    }

    /// `media:content` stands in for a missing enclosure, `media:thumbnail` for artwork.
    @Test func mediaRSS() throws {
        let xml = """
            <rss xmlns:media="http://search.yahoo.com/mrss/"><channel><item><title>v</title>
            <media:group>
              <media:content url="https://example.com/v.jpg" type="image/jpeg"/>
              <media:content url="https://example.com/v.mp4" type="video/mp4" fileSize="99" duration="61"/>
              <media:content url="https://example.com/v.m4a" medium="audio"/>
            </media:group>
            <media:thumbnail url="https://example.com/thumb.jpg"/>
            <media:description>From media</media:description>
            </item></channel></rss>
            """
        let episode = try #require(try Self.parse(xml).episodes.first)
        #expect(
            episode.enclosures == [
                .init(url: "https://example.com/v.mp4", length: 99, type: "video/mp4"),
                .init(url: "https://example.com/v.m4a"),
            ])
        #expect(episode.duration == 61)
        #expect(episode.artworkURL == "https://example.com/thumb.jpg")
        #expect(episode.descriptionText == "From media")
    }

    // MARK: - Substitute guids

    @Test func substituteGUIDsAreStableAndDistinct() throws {
        let enclosure = EpisodeBuilder.substituteGUID(enclosure: "https://x/a.mp3", link: "https://x/a", title: "A", published: nil)
        #expect(enclosure.hasPrefix("ferry-sha256:"))
        #expect(enclosure.count == "ferry-sha256:".count + 64)
        // The enclosure wins over the link; the link over the title.
        #expect(enclosure == EpisodeBuilder.substituteGUID(enclosure: "https://x/a.mp3", link: nil, title: "B", published: nil))
        let link = EpisodeBuilder.substituteGUID(enclosure: nil, link: "https://x/a", title: "A", published: nil)
        #expect(link != enclosure)
        #expect(link == EpisodeBuilder.substituteGUID(enclosure: nil, link: "https://x/a", title: "Other", published: nil))
        let titled = EpisodeBuilder.substituteGUID(enclosure: nil, link: nil, title: "A", published: Date(timeIntervalSince1970: 0))
        #expect(titled != EpisodeBuilder.substituteGUID(enclosure: nil, link: nil, title: "A", published: Date(timeIntervalSince1970: 1)))
        #expect(titled != EpisodeBuilder.substituteGUID(enclosure: nil, link: nil, title: "B", published: Date(timeIntervalSince1970: 0)))
        // SHA-256 of "enclosure\nhttps://x/a.mp3" (Python's hashlib).
        #expect(enclosure == "ferry-sha256:61d1e0fbb6e36397ca413efddd3275df7570f6dc5098e2d502a9233c496dfa13")
    }

    /// The written URL, not the resolved one: the identity survives a feed moving.
    @Test func substituteGUIDsIgnoreTheFeedURL() throws {
        let xml = #"<rss><channel><item><enclosure url="ep1.mp3" type="audio/mpeg"/></item></channel></rss>"#
        let here = try Self.parse(xml, url: URL(string: "https://a.example/feed.xml")!)
        let there = try Self.parse(xml, url: URL(string: "https://b.example/podcast/rss")!)
        #expect(here.episodes[0].enclosures[0].url == "https://a.example/ep1.mp3")
        #expect(there.episodes[0].enclosures[0].url == "https://b.example/podcast/ep1.mp3")
        #expect(here.episodes[0].guid == there.episodes[0].guid)
    }
}
