import FerryKit
import Foundation
import Testing

import FerryCore
@testable import FerryListening

/// Chapters and transcripts as podcast hosts write them, and what is not one.
@Suite struct EpisodeSidecarsTests {
    @Test func podcastingChaptersInOrderWithoutUnusableOnes() throws {
        let json = #"""
            {"version": "1.2.0", "chapters": [
              {"startTime": 754.5, "title": "Second\n  part", "img": "https://x.example/2.jpg"},
              {"startTime": 0, "title": "Intro", "url": "https://x.example/"},
              {"title": "no start"}, {"startTime": -3, "title": "negative"}
            ]}
            """#
        let chapters = try EpisodeSidecars.chapters(from: Data(json.utf8))
        #expect(chapters == [
            Chapter(startSeconds: 0, title: "Intro", url: "https://x.example/"),
            Chapter(startSeconds: 754.5, title: "Second part", imageURL: "https://x.example/2.jpg"),
        ])
    }

    @Test(arguments: ["", "<html>Not found</html>", #"{"version": "1.2.0"}"#, "[1, 2]", #"{"chapters": "soon"}"#])
    func notChaptersIsRefused(text: String) {
        #expect(throws: FerryError.self) { try EpisodeSidecars.chapters(from: Data(text.utf8)) }
    }

    @Test func webVTTWithVoicesTagsAndCueIDs() throws {
        let vtt = """
            WEBVTT

            NOTE a comment

            intro
            00:00:01.000 --> 00:00:04.500 align:start
            <v Ada Lovelace>Welcome to <b>the</b> show &amp; more.

            01:02.250 --> 01:05.000
            Second line,
            in two parts.
            """
        let cues = try EpisodeSidecars.transcript(from: Data(vtt.utf8))
        #expect(cues == [
            TranscriptCue(startSeconds: 1, endSeconds: 4.5, speaker: "Ada Lovelace", text: "Welcome to the show & more."),
            TranscriptCue(startSeconds: 62.25, endSeconds: 65, text: "Second line, in two parts."),
        ])
    }

    @Test func srtWithCRLF() throws {
        let srt = "1\r\n00:00:01,000 --> 00:00:02,000\r\nHello\r\n\r\n2\r\n01:00:00,500 --> 01:00:03,000\r\nAn hour in\r\n"
        let cues = try EpisodeSidecars.transcript(from: Data(srt.utf8))
        #expect(cues.map(\.startSeconds) == [1, 3600.5] && cues.map(\.text) == ["Hello", "An hour in"])
    }

    @Test func podcastingJSONTranscript() throws {
        let json = #"{"version": "1.0.0", "segments": [{"speaker": "Bo", "startTime": 2.5, "endTime": 4, "body": "Hi there"}, {"startTime": 1, "body": "First"}]}"#
        let cues = try EpisodeSidecars.transcript(from: Data(json.utf8))
        #expect(cues == [
            TranscriptCue(startSeconds: 1, endSeconds: 1, text: "First"),
            TranscriptCue(startSeconds: 2.5, endSeconds: 4, speaker: "Bo", text: "Hi there"),
        ])
    }

    @Test func podcastingHTMLTranscript() throws {
        let html = """
            <cite>Travis:</cite>
            <time>0:00</time>
            <p>It&#39;s <b>day</b> one &amp; all.</p>
            <cite>Sarah:</cite>
            <time>0:53</time>
            <p>Good   audio &#x2019;matters&rsquo;.</p>
            <p>Same speaker, no new time.</p>
            """
        let cues = try EpisodeSidecars.transcript(from: Data(html.utf8))
        #expect(cues == [
            TranscriptCue(startSeconds: 0, endSeconds: 53, speaker: "Travis", text: "It's day one & all."),
            TranscriptCue(startSeconds: 53, endSeconds: 53, speaker: "Sarah", text: "Good audio \u{2019}matters\u{2019}."),
            TranscriptCue(startSeconds: 53, endSeconds: 53, speaker: "Sarah", text: "Same speaker, no new time."),
        ])
    }

    /// The namespace's own examples, one per format, each read whole with its times and speakers.
    @Test(arguments: ["html", "json", "srt", "vtt"])
    func theNamespaceExamples(format: String) throws {
        var folder = URL(fileURLWithPath: #filePath)
        for _ in 0..<2 { folder.deleteLastPathComponent() }
        let file = folder.appendingPathComponent("Fixtures/feeds/podcasting2/podcast-namespace/transcripts/example.\(format)")
        let cues = try EpisodeSidecars.transcript(from: try Data(contentsOf: file))
        #expect(cues.count > 3 && cues.contains { $0.startSeconds > 0 }, "\(cues.prefix(3))")
        #expect(cues.allSatisfy { !$0.text.isEmpty && !$0.text.contains("&#39;") && !$0.text.contains("<") })
        if format == "html" { #expect(cues.first?.speaker == "Travis" && cues[1].startSeconds == 53) }
    }

    @Test(arguments: ["", "just some text", "<html><body>404</body></html>", "<html><body><p>Not found</p></body></html>", #"{"segments": 3}"#, "WEBVTT\n\n00:xx --> 00:01\nbad times"])
    func notATranscriptIsRefused(text: String) {
        #expect(throws: FerryError.self) { try EpisodeSidecars.transcript(from: Data(text.utf8)) }
    }

    @Test(arguments: [("00:01.5", 1.5), ("01:00:00,250", 3600.25), ("1:2:3", 3723.0)] as [(String, Double)])
    func timestamps(text: String, seconds: Double) {
        #expect(EpisodeSidecars.timestamp(text) == seconds)
    }
}
