import Foundation
import Testing

import FerryCore
@testable import FerryListening

@Suite struct ApplePodcastsURLTests {
    @Test(arguments: [
        ("https://podcasts.apple.com/us/podcast/some-name/id123456789?i=1000654321", 123_456_789),
        ("https://podcasts.apple.com/us/podcast/some-name/id123456789", 123_456_789),
        ("https://podcasts.apple.com/us/podcast/some-name/id123456789/", 123_456_789),
        ("https://podcasts.apple.com/gb/podcast/the-daily/id1200361736?uo=4", 1_200_361_736),
        ("https://podcasts.apple.com/podcast/id1200361736", 1_200_361_736),
        ("https://podcasts.apple.com/us/podcast/id1200361736", 1_200_361_736),
        ("https://podcasts.apple.com/de/podcast/caf%C3%A9-fran%C3%A7ais/id42#top", 42),
        ("http://podcasts.apple.com/us/podcast/x/id7", 7),
        ("HTTPS://PODCASTS.APPLE.COM/US/PODCAST/X/ID7", 7),
        ("https://itunes.apple.com/us/podcast/s-i-s-t-a-k/id337994101?uo=4", 337_994_101),
        ("  https://podcasts.apple.com/us/podcast/x/id99\n", 99),
    ])
    func readsTheShowID(text: String, id: Int64) {
        #expect(ApplePodcastsURL.id(from: text) == id)
    }

    @Test(arguments: [
        "", "garbage", "podcasts.apple.com/us/podcast/x/id1", "https://example.com/us/podcast/x/id123",
        "https://podcasts.apple.com.evil.example/us/podcast/x/id123", "https://music.apple.com/us/album/x/id123",
        "https://itunes.apple.com/us/album/hold-it-down-single/id396405320?uo=4", "https://podcasts.apple.com/us/podcast/x",
        "https://podcasts.apple.com/us/podcast/x/idabc", "https://podcasts.apple.com/us/podcast/x/id", "https://podcasts.apple.com/us/podcast/x/id0",
        "https://podcasts.apple.com/us/podcast/x/id-5", "https://podcasts.apple.com/us/podcast/x/id12345678901234567890",
        "https://podcasts.apple.com/us/podcast/x/123456", "ftp://podcasts.apple.com/us/podcast/x/id1",
        "https://podcasts.apple.com/us/podcast/x/id1/extra", "https://podcasts.apple.com/?url=/us/podcast/x/id1",
    ])
    func refusesEverythingElse(text: String) {
        #expect(ApplePodcastsURL.id(from: text) == nil)
    }

    @Test func takesAURLToo() {
        #expect(ApplePodcastsURL.id(from: URL(string: "https://podcasts.apple.com/us/podcast/x/id5")!) == 5)
    }
}
