import Foundation

/// A moment in an episode or a song the listener marked, with an optional note: each listener's
/// own (`/v1/bookmarks`, `ferry bookmark`).
public struct Bookmark: Codable, Sendable, Hashable, Identifiable {
    public var id: Int64
    /// `episode` or `track` (a song).
    public var media: String
    public var mediaId: Int64
    /// Where, in seconds from the start.
    public var seconds: Double
    public var note: String?
    public var createdAt: Date
    /// The episode's or song's title, and its podcast's or artist's, when it is still known.
    public var title: String?
    public var showTitle: String?
    /// The podcast of an episode (to open its page).
    public var podcastId: Int64?

    public init(
        id: Int64, media: String, mediaId: Int64, seconds: Double, note: String? = nil, createdAt: Date, title: String? = nil,
        showTitle: String? = nil, podcastId: Int64? = nil
    ) {
        self.id = id
        self.media = media
        self.mediaId = mediaId
        self.seconds = seconds
        self.note = note
        self.createdAt = createdAt
        self.title = title
        self.showTitle = showTitle
        self.podcastId = podcastId
    }
}

/// `GET /v1/bookmarks`, `GET /v1/episodes/{id}/bookmarks`: oldest first within an item, items newest first.
public struct BookmarkList: Codable, Sendable, Hashable {
    public var bookmarks: [Bookmark]

    public init(bookmarks: [Bookmark]) { self.bookmarks = bookmarks }
}

/// `POST /v1/episodes/{id}/bookmarks` (and tracks'): where, and an optional note.
public struct NewBookmark: Codable, Sendable, Hashable {
    public var seconds: Double
    public var note: String?

    public init(seconds: Double, note: String? = nil) {
        self.seconds = seconds
        self.note = note
    }

    /// - Throws: `invalid_request` for a time that is not one or a note too long.
    public func validate() throws(FerryError) {
        guard seconds.isFinite, (0...1_000_000).contains(seconds) else {
            throw FerryError.invalidRequest("A bookmark's time is seconds from the start, 0 to 1,000,000.")
        }
        try Self.validate(note: note)
    }

    static func validate(note: String?) throws(FerryError) {
        if let note, note.count > 1000 || note.utf8.contains(0) {
            throw FerryError.invalidRequest("A bookmark's note is at most 1,000 characters, without NUL.")
        }
    }
}

/// `PATCH /v1/bookmarks/{id}`: a new note (empty or null: none).
public struct BookmarkNote: Codable, Sendable, Hashable {
    public var note: String?

    public init(note: String?) { self.note = note }

    public func validate() throws(FerryError) { try NewBookmark.validate(note: note) }
}

/// `GET /v1/podcasts/export?format=json`: what the OPML export holds, and the bookmarks.
public struct LibraryExport: Codable, Sendable, Hashable {
    public struct Subscription: Codable, Sendable, Hashable {
        public var feedURL: String
        public var title: String

        public init(feedURL: String, title: String) {
            self.feedURL = feedURL
            self.title = title
        }
    }

    public var subscriptions: [Subscription]
    public var bookmarks: [Bookmark]

    public init(subscriptions: [Subscription], bookmarks: [Bookmark]) {
        self.subscriptions = subscriptions
        self.bookmarks = bookmarks
    }
}
