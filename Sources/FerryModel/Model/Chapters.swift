import Foundation

/// A chapter of an episode (Podcasting 2.0 JSON chapters), as the daemon reads it.
public struct Chapter: Codable, Sendable, Hashable {
    public var startSeconds: Double
    public var title: String
    /// The chapter's picture and link, as the file gives them (untrusted).
    public var imageURL: String?
    public var url: String?

    public init(startSeconds: Double, title: String, imageURL: String? = nil, url: String? = nil) {
        self.startSeconds = startSeconds
        self.title = title
        self.imageURL = imageURL
        self.url = url
    }
}

/// `GET /v1/episodes/{id}/chapters`: in order of their start.
public struct ChapterList: Codable, Sendable, Hashable {
    public var chapters: [Chapter]
    public init(chapters: [Chapter]) { self.chapters = chapters }
}

/// A line of an episode's transcript (WebVTT, SRT or Podcasting 2.0 JSON), as plain text.
public struct TranscriptCue: Codable, Sendable, Hashable {
    public var startSeconds: Double
    public var endSeconds: Double
    public var speaker: String?
    public var text: String

    public init(startSeconds: Double, endSeconds: Double, speaker: String? = nil, text: String) {
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.speaker = speaker
        self.text = text
    }
}

/// `GET /v1/episodes/{id}/transcript`: in order of their start.
public struct Transcript: Codable, Sendable, Hashable {
    public var cues: [TranscriptCue]
    public init(cues: [TranscriptCue]) { self.cues = cues }
}
