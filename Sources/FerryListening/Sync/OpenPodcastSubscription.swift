import Crypto
import FerryKit
import Foundation

/// A feed in a listener's subscription log: its last change (at or after a `since`), as the
/// store keeps it. `seq` orders changes and names a deletion.
package struct SyncSubscriptionState: Sendable, Hashable {
    package var url: String
    package var subscribed: Bool
    /// Seconds since 1970.
    package var at: Int64
    package var seq: Int64
    /// Left through the Open Podcast API's DELETE (a tombstone), not only unsubscribed.
    package var deleted: Bool

    package init(url: String, subscribed: Bool, at: Int64, seq: Int64, deleted: Bool) {
        self.url = url
        self.subscribed = subscribed
        self.at = at
        self.seq = seq
        self.deleted = deleted
    }
}

/// A subscription as the Open Podcast API's draft shows it (openpodcastapi.org, "Subscriptions",
/// its only settled endpoint): the feed, its GUID, whether the listener is subscribed and since
/// when. The GUID is the one `podcast:guid` defines for the feed's URL (``OpenPodcastGUID``),
/// which a client can work out alone; when the feed names another (it moved, keeping its GUID),
/// that one is `new_guid`, learnt when Ferry first read the feed.
package struct OpenPodcastSubscription: Sendable, Hashable, Encodable {
    package var feedURL: String
    package var guid: String
    package var isSubscribed: Bool
    package var subscriptionChanged: Date?
    package var newGuid: String?
    package var guidChanged: Date?
    package var deleted: Date?

    enum CodingKeys: String, CodingKey {
        case feedURL = "feed_url", guid, isSubscribed = "is_subscribed", subscriptionChanged = "subscription_changed"
        case newGuid = "new_guid", guidChanged = "guid_changed", deleted
    }

    /// `state` of a feed whose podcast (if the library has it) names `feedGUID` and was first
    /// read at `firstRead`.
    package init(_ state: SyncSubscriptionState, feedGUID: String?, firstRead: Date?) {
        feedURL = state.url
        guid = OpenPodcastGUID.of(feedURL: state.url)
        isSubscribed = state.subscribed
        subscriptionChanged = Date(timeIntervalSince1970: TimeInterval(state.at))
        if let feedGUID = feedGUID.flatMap(OpenPodcastGUID.normalized), feedGUID != guid {
            newGuid = feedGUID
            guidChanged = firstRead
        }
        deleted = state.deleted ? subscriptionChanged : nil
    }

    /// Whether a client's `guid` names this subscription (its own, or the feed's newer one).
    package func isNamed(_ text: String) -> Bool {
        guard let wanted = OpenPodcastGUID.normalized(text) else { return false }
        return wanted == guid || wanted == newGuid
    }
}

/// `podcast:guid`'s rule (Podcasting 2.0): a UUIDv5, in the namespace
/// `ead4c236-bf58-58c6-a2c6-a6b28d128cb6`, of the feed's URL without its scheme and trailing
/// slashes. `https://mp3s.nashownotes.com/pc20rss.xml` gives `917393e3-1b1e-5cef-ace4-edaa54e1f810`,
/// the GUID that feed declares.
package enum OpenPodcastGUID {
    static let namespace: [UInt8] = [0xea, 0xd4, 0xc2, 0x36, 0xbf, 0x58, 0x58, 0xc6, 0xa2, 0xc6, 0xa6, 0xb2, 0x8d, 0x12, 0x8c, 0xb6]

    package static func of(feedURL: String) -> String {
        var name = Substring(feedURL.trimmingCharacters(in: .whitespacesAndNewlines))
        if let scheme = name.range(of: "://") { name = name[scheme.upperBound...] }
        while name.hasSuffix("/") { name = name.dropLast() }
        var bytes = Array(Insecure.SHA1.hash(data: namespace + Array(name.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0f) | 0x50  // version 5
        bytes[8] = (bytes[8] & 0x3f) | 0x80  // RFC 4122 variant
        let uuid = UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
        return uuid.uuidString.lowercased()
    }

    /// A UUID in the API's form (lower-case), or nil for anything else (a feed's `podcast:guid`
    /// that is not one is not used).
    package static func normalized(_ text: String) -> String? {
        UUID(uuidString: text.trimmingCharacters(in: .whitespacesAndNewlines))?.uuidString.lowercased()
    }
}
