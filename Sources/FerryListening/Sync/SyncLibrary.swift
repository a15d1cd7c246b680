import FerryCore
import FerryKit
import Foundation
import Logging

/// The gpodder.net API's side of Ferry's library, for phones (AntennaPod, gPodder, Kasts):
/// users, devices, subscriptions with `since` deltas and episode actions. Each user's phones
/// sync that user's subscriptions and places, the same the web app shows them logged in: a
/// position saved by alice's phone is the one alice's web app resumes from (and back).
package struct SyncLibrary: Sendable {
    let podcasts: PodcastLibrary
    package let accounts: AccountLibrary
    let logger: Logger
    var store: any ListeningStore { podcasts.store }

    package init(podcasts: PodcastLibrary, accounts: AccountLibrary, logger: Logger) {
        self.podcasts = podcasts
        self.accounts = accounts
        self.logger = logger
    }

    // MARK: Users (accounts: the sync API's `/v1/sync/users` is the older name of `/v1/users`)

    /// Adds a member, or gives a user a new password. - Returns: true when the user is new.
    /// - Throws: `invalid_request` for a name that is not 1–64 letters, digits, `.`, `_`, `-`,
    ///   or a password shorter than 8 characters or longer than 1,024.
    @discardableResult
    package func setUser(_ name: String, password: String) async throws -> Bool {
        do {
            _ = try await accounts.add(name, password: password, role: .member)
            return true
        } catch let error as FerryError where error.code == .invalidState {
            _ = try await accounts.update(name, password: password, role: nil)
            return false
        }
    }

    package func removeUser(_ name: String) async throws { try await accounts.remove(name) }

    package func users() async throws -> [SyncUser] {
        try await accounts.list().map { SyncUser(name: $0.name, createdAt: $0.createdAt, devices: $0.devices) }
    }

    /// Whether the password is the user's. Unknown users take as long as known ones.
    /// An app password from the Nextcloud login flow (an account token) is one too.
    package func authenticate(_ name: String, password: String) async -> Bool {
        if password.hasPrefix("ferry_"), let identity = try? await accounts.identity(secret: password, address: nil) {
            return identity.user == name
        }
        return await accounts.verify(name, password: password) != nil
    }

    static func isIdentifier(_ text: String) -> Bool { AccountLibrary.isName(text) }

    // MARK: Devices

    package func devices(user: String) async throws -> [SyncDevice] {
        let count = try await store.syncSubscriptions(user: user).count
        return try await store.syncDevices(user: user).map { SyncDevice(id: $0.id, caption: $0.caption, type: $0.type, subscriptions: count) }
    }

    /// - Throws: `invalid_request` for a type gpodder.net does not know.
    package func updateDevice(user: String, id: String, caption: String?, type: String?) async throws {
        try Self.validate(device: id)
        if let type, !SyncDevice.types.contains(type) {
            throw FerryError.invalidRequest("A device's type is one of \(SyncDevice.types.joined(separator: ", ")).")
        }
        try await store.updateSyncDevice(user: user, id: id, caption: caption.map { String($0.prefix(200)) }, type: type)
    }

    static func validate(device: String) throws {
        guard isIdentifier(device) else { throw FerryError.invalidRequest("A device id has 1 to 64 letters, digits, '.', '_' or '-'.") }
    }

    // MARK: Subscriptions

    /// The user's every subscription (`since` nil or 0), else what was added and removed since then.
    package func subscriptions(user: String, since: Int64?) async throws -> (add: [String], remove: [String]) {
        guard let since, since > 0 else { return (try await store.syncSubscriptions(user: user), []) }
        return try await store.syncSubscriptionChanges(user: user, since: since)
    }

    /// A phone's changes: additions are subscribed in the background (``subscribePending()``),
    /// removals unsubscribe (files kept). URLs are cleaned as gpodder.net cleans them; one it
    /// cannot use comes back in `updateURLs` with an empty replacement.
    /// - Throws: `invalid_request` when a URL is both added and removed.
    package func changeSubscriptions(user: String, device: String, add: [String], remove: [String]) async throws -> [[String]] {
        try Self.validate(device: device)
        var updates: [[String]] = []
        func clean(_ urls: [String]) -> [String] {
            urls.compactMap { url in
                guard let cleaned = Self.feedURL(cleaning: url) else {
                    updates.append([url, ""])
                    return nil
                }
                if cleaned != url { updates.append([url, cleaned]) }
                return cleaned
            }
        }
        let added = clean(add), removed = clean(remove)
        if let both = Set(added).intersection(removed).first {
            throw FerryError.invalidRequest("\(both) is both added and removed.")
        }
        for id in try await store.applySyncSubscriptions(user: user, device: device, add: added, remove: removed) {
            try? await podcasts.as(user).unsubscribe(id, deleteFiles: false)
        }
        return updates
    }

    /// A feed URL as every dialect takes it: trimmed, http or https, 4,096 bytes at most; nil
    /// for anything else.
    static func feedURL(cleaning text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.utf8.count <= 4096 && EpisodeAction.isWebURL(trimmed) ? trimmed : nil
    }

    /// Subscribes users to the feeds their phones added; one that fails stays pending with its
    /// error and is tried again next time (each refresh of every podcast).
    package func subscribePending() async {
        for (user, url) in (try? await store.syncPending()) ?? [] {
            do {
                _ = try await podcasts.as(user).subscribe(url)
                try await store.resolvePending(user: user, url, error: nil)
                logger.info("subscribed for a phone", metadata: ["podcast.feed": "\(url)", "user": "\(user)"])
            } catch {
                let message = (error as? FerryError)?.message ?? "\(error)"
                try? await store.resolvePending(user: user, url, error: message)
                logger.warning("could not subscribe for a phone", metadata: ["podcast.feed": "\(url)", "user": "\(user)", "error": "\(message)"])
            }
        }
    }

    // MARK: Episode actions

    package func uploadActions(_ actions: [EpisodeAction], user: String) async throws {
        for device in Set(actions.compactMap(\.device)) { try Self.validate(device: device) }
        try await store.storeEpisodeActions(actions, user: user)
    }

    package func actions(user: String, since: Int64?, podcast: String?, device: String?, aggregated: Bool) async throws -> [EpisodeAction] {
        try await store.episodeActions(user: user, since: since ?? 0, podcast: podcast, device: device, aggregated: aggregated)
    }

    /// Seconds since 1970, the API's clock.
    package static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
