import Foundation

/// A podcast RSS feed written for a test, with enclosures on the test's own origin.
package struct TestFeed: Sendable {
    package struct Item: Sendable {
        package var guid: String
        package var title: String
        package var published: String
        package var enclosure: String
        package var type: String
        package var duration: String?

        package init(guid: String, title: String, published: String, enclosure: String, type: String = "audio/mpeg", duration: String? = "12:34") {
            self.guid = guid
            self.title = title
            self.published = published
            self.enclosure = enclosure
            self.type = type
            self.duration = duration
        }
    }

    package var title: String
    package var items: [Item]
    package var newFeedURL: String?

    package init(title: String, items: [Item], newFeedURL: String? = nil) {
        self.title = title
        self.items = items
        self.newFeedURL = newFeedURL
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    package var xml: String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <channel>
            <title>\(Self.escape(title))</title>
            <itunes:author>Test Author</itunes:author>
            <description>A show &lt;b&gt;about&lt;/b&gt; tests.</description>

            """
        if let newFeedURL { text += "<itunes:new-feed-url>\(Self.escape(newFeedURL))</itunes:new-feed-url>\n" }
        for item in items {
            text += """
                <item>
                <guid isPermaLink="false">\(Self.escape(item.guid))</guid>
                <title>\(Self.escape(item.title))</title>
                <pubDate>\(item.published)</pubDate>
                <enclosure url="\(Self.escape(item.enclosure))" length="1000" type="\(item.type)"/>
                \(item.duration.map { "<itunes:duration>\($0)</itunes:duration>" } ?? "")
                </item>

                """
        }
        return text + "</channel>\n</rss>\n"
    }

    package var data: Data { Data(xml.utf8) }
}
