import FerryKit
import Foundation
import Testing

@testable import FerryFeeds

@Suite struct OPMLTests {
    static func error(_ text: String) -> FerryError? {
        do {
            _ = try OPML.parse(Data(text.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test func readsSubscriptionsAndFlattensFolders() throws {
        let opml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <opml version="1.0">
              <head><title>My podcasts</title></head>
              <body>
                <outline text="Tech" title="Tech">
                  <outline type="rss" text="Ferry &amp; Friends" title="Ferry &amp; Friends"
                           xmlUrl="https://example.com/ferry.xml" htmlUrl="https://example.com/ferry/"/>
                  <outline text="Nested">
                    <outline type="rss" text="Deep" xmlURL=" https://example.com/deep.xml "/>
                  </outline>
                </outline>
                <outline type="rss" text="Only text" xmlurl="https://example.com/text.xml"/>
                <outline text="No feed"/>
                <outline text="Bad URL" xmlUrl="not a url"/>
                <outline text="Entity &eacute;t&eacute;" xmlUrl="https://example.com/ete.xml?a=1&b=2"/>
              </body>
            </opml>
            """
        let outlines = try OPML.parse(Data(opml.utf8))
        #expect(
            outlines == [
                OPML.Outline(
                    title: "Ferry & Friends", xmlURL: URL(string: "https://example.com/ferry.xml")!,
                    htmlURL: URL(string: "https://example.com/ferry/")!),
                OPML.Outline(title: "Deep", xmlURL: URL(string: "https://example.com/deep.xml")!),
                OPML.Outline(title: "Only text", xmlURL: URL(string: "https://example.com/text.xml")!),
                OPML.Outline(title: "Entity été", xmlURL: URL(string: "https://example.com/ete.xml?a=1&b=2")!),
            ])
    }

    @Test func exportIsValidOPML2() {
        let outlines = [
            OPML.Outline(
                title: #"Tom & "Jerry" <Live> 'Show'"#, xmlURL: URL(string: "https://example.com/feed?a=1&b=2")!,
                htmlURL: URL(string: "https://example.com/")!),
            OPML.Outline(title: "Café ☕\tTab", xmlURL: URL(string: "https://example.com/cafe.xml")!),
        ]
        let expected = """
            <?xml version="1.0" encoding="UTF-8"?>
            <opml version="2.0">
              <head>
                <title>Ferry &amp; co</title>
              </head>
              <body>
                <outline type="rss" text="Tom &amp; &quot;Jerry&quot; &lt;Live&gt; 'Show'" \
            title="Tom &amp; &quot;Jerry&quot; &lt;Live&gt; 'Show'" xmlUrl="https://example.com/feed?a=1&amp;b=2" \
            htmlUrl="https://example.com/"/>
                <outline type="rss" text="Café ☕&#9;Tab" title="Café ☕&#9;Tab" xmlUrl="https://example.com/cafe.xml"/>
              </body>
            </opml>

            """
        #expect(OPML.export(outlines, title: "Ferry & co") == expected)
    }

    @Test func roundTrips() throws {
        let outlines = [
            OPML.Outline(
                title: #"Tom & "Jerry" <Live> 'Show' ünïcødé 🎧"#, xmlURL: URL(string: "https://example.com/feed?a=1&b=2")!,
                htmlURL: URL(string: "https://example.com/show")!),
            OPML.Outline(title: "", xmlURL: URL(string: "http://example.org/rss")!),
            OPML.Outline(title: "]]> --> &amp;", xmlURL: URL(string: "https://example.net/x.xml")!),
        ]
        let exported = OPML.export(outlines, title: "<My> subscriptions")
        #expect(try OPML.parse(Data(exported.utf8)) == outlines)
        // Characters XML cannot hold are left out rather than making a file nobody can read.
        let control = [OPML.Outline(title: "bell\u{7}", xmlURL: URL(string: "https://example.com/b.xml")!)]
        #expect(try OPML.parse(Data(OPML.export(control, title: "t").utf8)).map(\.title) == ["bell"])
    }

    @Test(arguments: [
        ("", "This is not an OPML file: the file is empty."),
        ("garbage", "This is not an OPML file: it is not XML (line 1, column 1: no XML at all)."),
        ("title,url\nx,https://example.com", "This is not an OPML file: it is not XML (line 1, column 1: no XML at all)."),
        (
            "<rss version=\"2.0\"><channel/></rss>",
            "This is not an OPML file: its root element is <rss>, where OPML has <opml>; it is a feed, so subscribe to its URL instead."
        ),
        ("<html><body>x</body></html>", "This is not an OPML file: its root element is <html>, where OPML has <opml>."),
    ])
    func rejectsWhatIsNotOPML(_ text: String, _ message: String) throws {
        let error = try #require(Self.error(text))
        #expect(error.code == .opmlInvalid)
        #expect(error.message == message)
    }

    @Test func refusesEntityDeclarations() throws {
        let error = try #require(Self.error(#"<!DOCTYPE opml [<!ENTITY x SYSTEM "file:///etc/passwd">]><opml><body/></opml>"#))
        #expect(error.code == .opmlInvalid)
        #expect(error.message.hasPrefix("The OPML file was refused: its DOCTYPE has an internal subset"))
    }

    @Test func brokenAfterSubscriptionsKeepsThem() throws {
        let outlines = try OPML.parse(Data(#"<opml><body><outline xmlUrl="https://example.com/a.xml" text="A"/><outline"#.utf8))
        #expect(outlines == [OPML.Outline(title: "A", xmlURL: URL(string: "https://example.com/a.xml")!)])
    }

    @Test func brokenBeforeAnySubscription() throws {
        let error = try #require(Self.error("<opml><body><outline"))
        #expect(error.code == .opmlInvalid)
        #expect(
            error.message
                == "The OPML file is broken (line 1, column 21: an unfinished tag) before any subscription. Export it "
                + "again from the app it came from.")
    }

    @Test func tooLarge() throws {
        #expect(throws: FerryError.self) { try OPML.parse(Data(count: 100), maximumBytes: 99) }
        do {
            _ = try OPML.parse(Data(count: 100), maximumBytes: 99)
        } catch {
            #expect(error.code == .opmlInvalid)
            #expect(error.message == "The OPML file is 100 bytes, more than the limit of 99 bytes, so it was not read.")
        }
    }
}
