import FerryCore
import FerryKit
import Foundation

/// The Open Podcast API's subscriptions over the same library as the gpodder.net and Nextcloud
/// paths: a feed added here is in a phone's next gpodder.net `since` answer, and one a phone
/// dropped is `is_subscribed: false` here. Its changes are made as the other dialects' are (a
/// new feed is fetched in the background), under the device `openpodcastapi`.
extension SyncLibrary {
    /// The device the Open Podcast API's changes are logged under.
    package static let openPodcastDevice = "openpodcastapi"

    /// Each feed the user has subscribed to or left, last change first at or after `since`
    /// (every one when nil), oldest change first.
    package func openSubscriptions(user: String, since: Int64?) async throws -> [OpenPodcastSubscription] {
        var states = try await store.syncSubscriptionStates(user: user, since: since)
        let podcasts = try await podcastsByFeed()
        if since == nil {
            // Subscriptions older than the log (journals before v14) are subscribed all the same,
            // since the podcast was first read.
            let logged = Set(states.map(\.url))
            for url in try await store.syncSubscriptions(user: user) where !logged.contains(url) {
                let at = Int64(podcasts[url]?.createdAt.timeIntervalSince1970 ?? 0)
                states.append(SyncSubscriptionState(url: url, subscribed: true, at: at, seq: 0, deleted: false))
            }
        }
        return states.map { state in
            let podcast = podcasts[state.url]
            return OpenPodcastSubscription(state, feedGUID: podcast?.podcasting?.guid, firstRead: podcast?.createdAt)
        }
    }

    /// The library's podcasts by feed URL: their GUIDs and when each was first read.
    private func podcastsByFeed() async throws -> [String: PodcastRecord] {
        Dictionary(try await store.podcasts().map { ($0.feedURL, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The subscription a client's GUID names (its own or its feed's newer one), deleted or not.
    package func openSubscription(user: String, guid: String) async throws -> OpenPodcastSubscription? {
        try await openSubscriptions(user: user, since: nil).last { $0.isNamed(guid) }
    }

    /// Subscribes the user to `feeds` (fetched in the background, as a phone's additions are);
    /// one that is not an http(s) URL is a failure with its reason. A GUID a client read in the
    /// feed is answered back (the draft calls it authoritative); Ferry reads the feed's own.
    package func addOpenSubscriptions(user: String, feeds: [(url: String, guid: String?)]) async throws
        -> (success: [OpenPodcastSubscription], failure: [(url: String, message: String)])
    {
        var success: [OpenPodcastSubscription] = [], failure: [(url: String, message: String)] = [], urls: [String] = []
        let now = Self.now()
        let known = try await podcastsByFeed()
        for feed in feeds {
            guard let url = Self.feedURL(cleaning: feed.url) else {
                failure.append((
                    feed.url,
                    feed.url.contains("://")
                        ? "Not a feed Ferry can fetch: only http and https URLs are."
                        : "No protocol present: a feed URL starts with http:// or https://."
                ))
                continue
            }
            let guid = feed.guid.flatMap(OpenPodcastGUID.normalized)
                ?? known[url]?.podcasting?.guid.flatMap(OpenPodcastGUID.normalized) ?? OpenPodcastGUID.of(feedURL: url)
            let state = SyncSubscriptionState(url: url, subscribed: true, at: now, seq: 0, deleted: false)
            var subscription = OpenPodcastSubscription(state, feedGUID: nil, firstRead: nil)
            subscription.guid = guid
            success.append(subscription)
            if !urls.contains(url) { urls.append(url) }
        }
        if !urls.isEmpty { _ = try await changeSubscriptions(user: user, device: Self.openPodcastDevice, add: urls, remove: []) }
        return (success, failure)
    }

    /// What a PATCH changed, as the draft answers it: only the fields it changed.
    package struct OpenSubscriptionPatch: Sendable, Encodable {
        package var newFeedURL: String?
        package var isSubscribed: Bool?
        package var subscriptionChanged: Date?

        enum CodingKeys: String, CodingKey {
            case newFeedURL = "new_feed_url", isSubscribed = "is_subscribed", subscriptionChanged = "subscription_changed"
        }
    }

    /// Moves `subscription` (``openSubscription(user:guid:)``'s) to `newFeedURL` (the new feed
    /// subscribed in the background, the old one left), or subscribes or leaves it.
    /// - Throws: `invalid_request` for a URL that is not http(s), or nothing to change.
    package func patchOpenSubscription(user: String, _ subscription: OpenPodcastSubscription, newFeedURL: String?, isSubscribed: Bool?) async throws
        -> OpenSubscriptionPatch
    {
        guard newFeedURL != nil || isSubscribed != nil else {
            throw FerryError.invalidRequest("Give new_feed_url or is_subscribed: there is nothing else to change.")
        }
        let target = try newFeedURL.map { text in
            guard let url = Self.feedURL(cleaning: text) else { throw FerryError.invalidRequest("new_feed_url must be an http or https URL.") }
            return url
        } ?? subscription.feedURL
        let moved = target != subscription.feedURL
        let subscribed = isSubscribed ?? subscription.isSubscribed
        // Moved: the new feed subscribed (if wanted), the old one left; else only the change asked.
        let add = subscribed && (moved || !subscription.isSubscribed) ? [target] : []
        let remove = subscription.isSubscribed && (moved || !subscribed) ? [subscription.feedURL] : []
        if !add.isEmpty || !remove.isEmpty {
            _ = try await changeSubscriptions(user: user, device: Self.openPodcastDevice, add: add, remove: remove)
        }
        var patch = OpenSubscriptionPatch(newFeedURL: moved ? target : nil, isSubscribed: isSubscribed)
        if moved || !add.isEmpty || !remove.isEmpty { patch.subscriptionChanged = Date(timeIntervalSince1970: TimeInterval(Self.now())) }
        return patch
    }

    /// Leaves the subscription (as unsubscribing in the web app does: the files stay) and marks
    /// it deleted: from now on it answers 410, until the feed is added again.
    /// - Returns: the deletion's id, for ``openDeletion(user:id:)``; a second DELETE answers the first's.
    package func deleteOpenSubscription(user: String, _ subscription: OpenPodcastSubscription) async throws -> Int64 {
        if subscription.isSubscribed {
            _ = try await changeSubscriptions(user: user, device: Self.openPodcastDevice, add: [], remove: [subscription.feedURL])
        }
        guard let id = try await store.markSyncDeletion(user: user, url: subscription.feedURL) else {
            throw FerryError(.invalidState, "\(subscription.feedURL) could not be marked deleted: it is subscribed again.")
        }
        return id
    }

    /// A deletion the user asked for, by its id: done once answered (Ferry deletes before it answers).
    package func openDeletion(user: String, id: Int64) async throws -> SyncSubscriptionState? {
        try await store.syncDeletion(user: user, id: id)
    }
}
