import FerryFeeds
import FerryKit
import Foundation
import Testing

import FerryCore
@testable import FerryListening

/// An episode without a title is shown with one made from its media file's name, else its
/// number; its file keeps the name it always had.
@Suite struct EpisodeTitleTests {
    static func record(title: String, enclosure: String?) -> EpisodeRecord {
        let episode = FeedEpisode(guid: "g", title: title, enclosures: enclosure.map { [.init(url: $0)] } ?? [])
        var record = EpisodeRecord(podcastId: 1, episode: episode, isNew: false)
        record.id = 7
        return record
    }

    @Test(arguments: [
        ("Episode 2: Resuming", "https://x.example/a.mp3", "Episode 2: Resuming"),
        ("", "https://x.example/media/My_Great%20Show%20Ep12.mp3?token=1", "My Great Show Ep12"),
        ("", "https://x.example/media/interview-with-ada.m4a", "interview-with-ada"),
        ("", "https://x.example/", "Episode 7"),
        ("", nil, "Episode 7"),
        ("", "not a url at all %%", "Episode 7"),
    ] as [(String, String?, String)])
    func aTitleIsAlwaysReadable(title: String, enclosure: String?, shown: String) {
        let record = Self.record(title: title, enclosure: enclosure)
        #expect(record.readableTitle == shown)
        if title.isEmpty { #expect(record.preferredFileName(EpisodeSources(url: enclosure ?? "")).hasPrefix("Episode 7")) }
    }
}
