import FerryModel
import Foundation
import Testing

@testable import FerryFeeds

/// Every Podcasting 2.0 feed of `Tests/Fixtures/feeds/podcasting2` (real feeds and the spec's
/// example, with their provenance in its README) parsed into ``PodcastNamespace``: per feed, the
/// counts of each element found by a plain text scan of the file (no XML parser, live items left
/// out as Ferry leaves them) against what the parser kept, and the values read by hand from it.
@Suite struct PodcastNamespaceTests {
    static let folder = FeedFixtures.directory.appendingPathComponent("podcasting2")

    static let feeds = [
        "podcast-namespace/example", "partytime/themnshow", "partytime/pc20rss", "partytime/no-agenda", "partytime/natube-test",
        "partytime/animated-no-agenda", "partytime/podverse-test-feed", "partytime/homegrown-hits", "partytime/publisher",
        "partytime/SOM", "partytime/launched", "partytime/unlocked",
    ]

    static func parse(_ name: String) throws -> (Feed, String) {
        let data = try Data(contentsOf: folder.appendingPathComponent(name + ".xml"))
        return (try FeedParser.parse(data, url: URL(string: "https://feeds.example/\(name).xml")), String(decoding: data, as: UTF8.self))
    }

    /// The items' texts, without live items (which are not episodes).
    static func items(_ xml: String) -> [Substring] {
        var text = xml
        while let start = text.range(of: "<podcast:liveItem"), let end = text.range(of: "</podcast:liveItem>", range: start.upperBound..<text.endIndex) {
            text.removeSubrange(start.lowerBound..<end.upperBound)
        }
        let pieces: [String] = text.components(separatedBy: "<item")
        return pieces[1...].compactMap { piece -> Substring? in
            // `<itunes:…` and `<items…` are not items; `<item>` and `<item attr…>` are.
            guard piece.first == ">" || piece.first == " " else { return nil }
            return piece.components(separatedBy: "</item>").first.map { Substring($0) }
        }
    }

    static func count(_ tag: String, in text: some StringProtocol) -> Int {
        text.components(separatedBy: "<podcast:\(tag) ").count - 1 + text.components(separatedBy: "<podcast:\(tag)>").count - 1
    }

    /// `<podcast:person …>Name</podcast:person>`; an empty `<podcast:person/>` names no one.
    static func namedPersons(in text: some StringProtocol) -> Int {
        let pattern = try! NSRegularExpression(pattern: #"<podcast:person(\s[^>]*[^/])?>\s*[^<\s]"#)
        let string = String(text)
        return pattern.numberOfMatches(in: string, range: NSRange(string.startIndex..., in: string))
    }

    @Test(arguments: feeds)
    func everyFeedsElementsAreKept(name: String) throws {
        let (feed, xml) = try Self.parse(name)
        let items = Self.items(xml)
        #expect(feed.episodes.count == items.count, "\(name): items")
        for (episode, item) in zip(feed.episodes, items) {
            let kept = episode.podcasting ?? PodcastNamespace.Episode()
            #expect(kept.alternateEnclosures.count == Self.count("alternateEnclosure", in: item), "\(name) \(episode.guid): alternate enclosures")
            #expect(kept.soundbites.count == Self.count("soundbite", in: item), "\(name) \(episode.guid): soundbites")
            #expect(kept.persons.count == Self.namedPersons(in: item), "\(name) \(episode.guid): persons")
            #expect(kept.txt.count == Self.count("txt", in: item), "\(name) \(episode.guid): txt")
            let sources = kept.alternateEnclosures.reduce(0) { $0 + $1.sources.count }
            #expect(sources == Self.count("source", in: item), "\(name) \(episode.guid): sources")
            let integrity = kept.alternateEnclosures.filter { $0.integrity != nil }.count
            #expect(integrity == Self.count("integrity", in: item), "\(name) \(episode.guid): integrity")
            if Self.count("season", in: item) > 0 { #expect(kept.season != nil, "\(name) \(episode.guid): season") }
        }
        let channel = items.isEmpty ? Substring(xml) : Substring(xml.components(separatedBy: "<item").first!)
        let show = feed.podcasting ?? PodcastNamespace.Show()
        #expect(show.funding.count == Self.count("funding", in: channel), "\(name): funding")
        #expect(show.trailers.count == Self.count("trailer", in: channel), "\(name): trailers")
        #expect((show.medium != nil) == (Self.count("medium", in: channel) > 0), "\(name): medium")
        #expect((show.locked != nil) == (Self.count("locked", in: channel) > 0), "\(name): locked")
    }

    @Test func theSpecsExampleReadAsWritten() throws {
        let (feed, _) = try Self.parse("podcast-namespace/example")
        let show = try #require(feed.podcasting)
        #expect(show.locked == true && show.lockedOwner == "podcastowner@example.com")
        #expect(show.funding == [.init(url: "https://example.com/donate", text: "Support the show!")])
        #expect(show.medium == "podcast" && show.usesPodping == true)
        #expect(show.license == .init(name: "my-podcast-license-v1", url: "https://example.org/mypodcastlicense/full.pdf"))
        #expect(show.trailers.map(\.title) == ["Coming April 1st, 2021"] && show.trailers.first?.length == 12_345_678)
        #expect(show.podroll.map(\.feedGUID) == ["917393e3-1b1e-5cef-ace4-edaa54e1f810", "396d9ae0-da7e-5557-b894-b606231fa3ea"])
        #expect(show.podroll.first?.feedURL == "https://feeds.podcastindex.org/pc20.xml")

        let third = try #require(feed.episodes.first?.podcasting)
        #expect(third.season == 1 && third.seasonName == "Podcasting 2.0" && third.episode == 3)
        #expect(third.soundbites == [.init(start: 33.833, duration: 60)])
        #expect(third.persons.map(\.name) == ["Adam Curry", "Dave Jones", "Becky Smith"])
        #expect(third.persons.map(\.role) == [nil, "guest", "cover art designer"] && third.persons[2].group == "visuals")
        #expect(third.persons[0].imageURL == "https://example.com/images/adamcurry.jpg")
        #expect(third.alternateEnclosures.map(\.title) == ["Standard", "High quality", "High quality AAC", "Low bandwidth", "Video version"])
        let standard = third.alternateEnclosures[0]
        #expect(standard.isDefault && standard.bitrate == 128_000 && standard.length == 43_200_000)
        #expect(standard.sources.map(\.uri) == ["https://example.com/file-03.mp3", "ipfs://someRandomMpegFile03"])
        #expect(standard.sources.map(\.isWeb) == [true, false])
        let video = third.alternateEnclosures[4]
        #expect(video.height == 720 && video.type == "video/mp4")
        // sha384-ExVq… is 48 bytes: its hex, as `openssl base64 -d | xxd -p` prints it.
        let digests = try #require(video.integrity?.digests)
        #expect(digests.map(\.algorithm) == ["sha384"])
        #expect(digests.first?.hex == "13156a8a38181e6d793ea42a7577d6f79c7e46ce82f9de84fc80b1c9039e15ebe7c4d2d1ff0b4936b3584e3232b14068")
    }

    @Test func realFeedsSchedulesMediumsAndLocks() throws {
        let mike = try #require(try Self.parse("partytime/themnshow").0.podcasting)
        #expect(mike.updateFrequency == .init(text: "Biweekly on Saturdays", rrule: "FREQ=WEEKLY;INTERVAL=2;BYDAY=SA"))
        #expect(mike.locked == false && mike.lockedOwner == "mike@mikeneumann.show")
        #expect(mike.trailers.map(\.season) == [nil, 1] && mike.trailers[1].title == "Season 1: The Mike Neumann Show")
        #expect(mike.txt.first?.text == "RhRhP4I9dvGyTwpoxlgcug==")
        #expect(try Self.parse("partytime/natube-test").0.podcasting?.medium == "video")
        #expect(try Self.parse("partytime/SOM").0.podcasting?.medium == "music")
        let publisher = try #require(try Self.parse("partytime/publisher").0.podcasting)
        #expect(publisher.medium == "publisher" && publisher.podroll.count == 3)
        #expect(publisher.podroll.contains { $0.feedGUID == "7a2d292c-8656-5fcf-88d2-31b10e54d7c7" && $0.medium == "podcast" })
        let launched = try #require(try Self.parse("partytime/launched").0.podcasting)
        #expect(launched.locked == true && launched.lockedOwner == "charliemchapman@gmail.com")
        // No Agenda's feed is not well-formed (`&gtgt;`); what comes before and after the break is still read.
        let noAgenda = try Self.parse("partytime/no-agenda").0
        #expect(noAgenda.podcasting?.locked == true && noAgenda.episodes.count == 29)
    }

    @Test func hostileValuesAreLeftOut() throws {
        let xml = """
            <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"><channel><title>H</title>
            <podcast:funding url="javascript:alert(1)">Click</podcast:funding>
            <podcast:person img="file:///etc/passwd">   </podcast:person>
            <podcast:updateFrequency rrule="NOT A RULE">whenever</podcast:updateFrequency>
            <item><guid>1</guid><enclosure url="https://h.example/1.mp3" type="audio/mpeg" length="1"/>
            <podcast:soundbite startTime="-5" duration="10">Before the start</podcast:soundbite>
            <podcast:soundbite startTime="5" duration="0">Empty</podcast:soundbite>
            <podcast:alternateEnclosure length="9"><podcast:source uri="https://h.example/x"/></podcast:alternateEnclosure>
            <podcast:alternateEnclosure type="audio/mpeg">
              <podcast:source uri="not a uri"/><podcast:source uri="https://h.example/ok.mp3"/>
              <podcast:integrity type="sri" value="sha384-notbase64!! sha256-AAAA"/>
            </podcast:alternateEnclosure>
            \(String(repeating: "<podcast:person>Many</podcast:person>", count: 500))
            </item></channel></rss>
            """
        let feed = try FeedParser.parse(Data(xml.utf8), url: nil)
        #expect(feed.podcasting?.funding == [] && feed.podcasting?.persons == [])
        // The rule is kept as written: it is checked where it is used (the refresh schedule).
        #expect(feed.podcasting?.updateFrequency?.rrule == "NOT A RULE")
        let episode = try #require(feed.episodes.first?.podcasting)
        #expect(episode.soundbites.isEmpty)
        #expect(episode.alternateEnclosures.count == 1 && episode.alternateEnclosures[0].sources.map(\.uri) == ["https://h.example/ok.mp3"])
        #expect(episode.alternateEnclosures[0].integrity?.digests.isEmpty == true, "no valid digest in a malformed SRI")
        #expect(episode.persons.count == PodcastNamespace.most.persons)
    }
}
