import Foundation

/// `GET /v1/transcripts/search?q=…`: where the listener's podcasts said the words, best first.
public struct TranscriptSearch: Codable, Sendable, Hashable {
    public var query: String
    public var hits: [TranscriptHit]
    /// How much of the library can be searched: episodes whose transcript is indexed, those
    /// waiting for theirs to be fetched, and those whose transcript could not be read.
    public var index: TranscriptIndexStatus

    public init(query: String, hits: [TranscriptHit], index: TranscriptIndexStatus) {
        self.query = query
        self.hits = hits
        self.index = index
    }

    /// The most hits one search answers.
    public static let maximumHits = 200
}

/// One line of a transcript that has the words: the episode, and the second it is said at.
public struct TranscriptHit: Codable, Sendable, Hashable {
    public var episodeId: Int64
    public var episodeTitle: String
    public var podcastId: Int64
    public var podcastTitle: String
    public var artworkURL: String?
    public var published: Date?
    /// Where the line starts, in seconds from the start of the episode.
    public var seconds: Double
    public var speaker: String?
    /// Where the web app plays the episode from: its downloaded file, else its stream through
    /// the daemon.
    public var playURL: String?
    /// The line (or, for a long one, the words around the first match), in parts that say
    /// which words matched: plain text, for a client to mark as it likes.
    public var snippet: [SnippetPart]

    public init(
        episodeId: Int64, episodeTitle: String, podcastId: Int64, podcastTitle: String, artworkURL: String? = nil, published: Date? = nil,
        seconds: Double, speaker: String? = nil, playURL: String? = nil, snippet: [SnippetPart]
    ) {
        self.playURL = playURL
        self.episodeId = episodeId
        self.episodeTitle = episodeTitle
        self.podcastId = podcastId
        self.podcastTitle = podcastTitle
        self.artworkURL = artworkURL
        self.published = published
        self.seconds = seconds
        self.speaker = speaker
        self.snippet = snippet
    }

    public struct SnippetPart: Codable, Sendable, Hashable {
        public var text: String
        public var match: Bool

        public init(_ text: String, match: Bool = false) {
            self.text = text
            self.match = match
        }
    }
}

/// How far indexing the library's transcripts has come.
public struct TranscriptIndexStatus: Codable, Sendable, Hashable {
    public var indexed: Int
    public var pending: Int
    public var failed: Int

    public init(indexed: Int, pending: Int, failed: Int) {
        self.indexed = indexed
        self.pending = pending
        self.failed = failed
    }
}
