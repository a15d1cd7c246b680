import FerryFeeds
import Foundation
import LibFuzzerDriver

/// Any bytes as a feed: FeedParser must return a feed or throw a FerryError, never crash, hang
/// or blow up memory. The same bytes as OPML, which shares the XML repair step.
func fuzzFeedParser(_ input: UnsafeRawBufferPointer) -> CInt {
    let data = Data(input)
    if let feed = try? FeedParser.parse(data, url: URL(string: "https://example.com/podcast/feed.xml")) {
        for episode in feed.episodes {
            precondition(!episode.guid.isEmpty, "an episode without a guid")
            // Episodes keep URLs as text (FeedEpisode): each must read back as an absolute URL.
            let urls = episode.enclosures.map(\.url) + episode.transcripts.map(\.url)
                + [episode.link, episode.artworkURL, episode.chaptersURL].compactMap { $0 }
            for url in urls {
                precondition(URL(string: url)?.scheme != nil, "an episode URL that is not absolute: \(url)")
            }
        }
    }
    _ = try? OPML.parse(data)
    return 0
}

/// libFuzzer's entry points: the input callback, and the `main` that SwiftPM links in
/// (`FuzzFeedParser_main`), which runs libFuzzer's driver.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzFeedParser(UnsafeRawBufferPointer(start: data, count: size))
}

@_cdecl("FuzzFeedParser_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
}
