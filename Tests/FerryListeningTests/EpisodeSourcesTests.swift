import FerryFeeds
import FerryKit
import Foundation
import Testing

import FerryCore
@testable import FerryListening

/// Which of an episode's files a podcast's choice downloads, with its mirrors and checksum.
@Suite struct EpisodeSourcesTests {
    typealias Alternate = PodcastNamespace.AlternateEnclosure

    static let sri = "sha256-" + Data(repeating: 7, count: 32).base64EncodedString()

    /// A video show: the enclosure is 720p video; the feed also offers 1080p, and audio at 64k and 128k.
    static let fields = EpisodeFields(
        guid: "g", title: "Ep", enclosureURL: "https://cdn.example/720.mp4", enclosureType: "video/mp4",
        podcasting: PodcastNamespace.Episode(alternateEnclosures: [
            Alternate(type: "video/mp4", height: 720, isDefault: true, sources: [
                .init(uri: "https://cdn.example/720.mp4"), .init(uri: "https://mirror.example/720.mp4"),
            ]),
            Alternate(type: "video/mp4", bitrate: 4_000_000, height: 1080, sources: [.init(uri: "https://cdn.example/1080.mp4")]),
            Alternate(type: "audio/mpeg", length: 60_000_000, bitrate: 128_000, sources: [.init(uri: "https://cdn.example/128.mp3")]),
            Alternate(type: "audio/opus", length: 30_000_000, bitrate: 64_000, sources: [
                .init(uri: "ipfs://QmOnly"), .init(uri: "https://cdn.example/64.opus"), .init(uri: "https://mirror.example/64.opus"),
            ], integrity: .init(type: "sri", value: sri)),
            // Smaller still, but nowhere to download it from.
            Alternate(type: "audio/aac", bitrate: 32_000, sources: [.init(uri: "ipfs://QmSmallest")]),
        ])
    )

    @Test func theFeedsOwnFileWithItsMirrors() throws {
        let sources = try #require(EpisodeSources(Self.fields))
        #expect(sources.url == "https://cdn.example/720.mp4" && sources.type == "video/mp4")
        #expect(sources.mirrors == ["https://mirror.example/720.mp4"] && sources.checksum == nil)
    }

    @Test func theSmallestAudioFromItsFirstWebSourceWithItsChecksum() throws {
        let sources = try #require(EpisodeSources(Self.fields, choice: .smallestAudio))
        #expect(sources.url == "https://cdn.example/64.opus" && sources.type == "audio/opus")
        #expect(sources.mirrors == ["https://mirror.example/64.opus"])
        #expect(sources.checksum?.algorithm == .sha256)
        let record = EpisodeRecord(podcastId: 1, episode: FeedEpisode(guid: "g", title: "Ep"), isNew: false)
        #expect(record.preferredFileName(sources) == "Ep.opus")
    }

    @Test func theHighestQualityOfTheEnclosuresKind() throws {
        let sources = try #require(EpisodeSources(Self.fields, choice: .highestQuality))
        #expect(sources.url == "https://cdn.example/1080.mp4" && sources.mirrors.isEmpty)
        // An audio show stays audio, taking the highest bitrate.
        var audio = Self.fields
        audio.enclosureURL = "https://cdn.example/128.mp3"
        audio.enclosureType = "audio/mpeg"
        #expect(EpisodeSources(audio, choice: .highestQuality)?.url == "https://cdn.example/128.mp3")
        #expect(EpisodeSources(audio, choice: .smallestAudio)?.url == "https://cdn.example/64.opus")
    }

    /// Without alternates (or none of the kind asked for) every choice is the feed's file.
    @Test func withoutAlternatesEveryChoiceIsTheEnclosure() throws {
        let plain = EpisodeFields(guid: "g", enclosureURL: "https://cdn.example/a.mp3", enclosureType: "audio/mpeg")
        for choice in EnclosureChoice.allCases {
            #expect(EpisodeSources(plain, choice: choice) == EpisodeSources(url: "https://cdn.example/a.mp3", type: "audio/mpeg"))
        }
        var videoOnly = Self.fields
        videoOnly.podcasting?.alternateEnclosures.removeAll { $0.type.hasPrefix("audio") }
        #expect(EpisodeSources(videoOnly, choice: .smallestAudio)?.url == "https://cdn.example/720.mp4")
        #expect(EpisodeSources(EpisodeFields(guid: "none"), choice: .smallestAudio) == nil)
    }
}
