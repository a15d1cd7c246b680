import Foundation

/// Whose places, subscriptions and Up Next a request reads and changes: an account's name, or
/// ``owner`` for the machine's own user (the daemon's token, the login link of `ferry open`,
/// the CLI). Account names are never empty, so the owner is no account.
package enum Listener {
    package static let owner = ""
}

/// One listener's subscription to a podcast of the shared library, with their own wishes for
/// it. The podcast and its episodes and files exist once; the podcast's own `autoDownload` and
/// `keepLatest` are the union of its subscribers' (``union(of:)``), kept by the store in the
/// transaction that changes a subscription.
package struct Subscription: Codable, Sendable, Hashable {
    package var listener: String
    package var podcastId: Int64
    /// Download the newest N episodes by themselves (0: none).
    package var autoDownload = 0
    /// Keep only the newest N downloaded episodes (nil: all).
    package var keepLatest: Int?
    /// The player's speed for this podcast (nil: the player's own).
    package var playbackSpeed: Double?
    /// Episodes listed oldest first (a serial).
    package var oldestFirst = false
    package var createdAt: Date

    package init(listener: String, podcastId: Int64, createdAt: Date = Date()) {
        self.listener = listener
        self.podcastId = podcastId
        self.createdAt = createdAt
    }

    /// What the library does for a podcast, given all its subscriptions: the most episodes anyone
    /// wants downloaded, and the most anyone wants kept (a listener who set no limit leaves it to
    /// those who did). Files someone is in the middle of or has in Up Next are kept besides
    /// (``PodcastLibrary``'s retention asks the store), so one listener's retention never deletes
    /// a file another still needs. No subscriber: nothing downloaded by itself, nothing deleted.
    package static func union(of subscriptions: [Subscription]) -> (autoDownload: Int, keepLatest: Int?) {
        (subscriptions.map(\.autoDownload).max() ?? 0, subscriptions.compactMap(\.keepLatest).max())
    }
}
