import FerryCore
import FerryKit
import Foundation
import GRDB

extension Subscription: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "subscription"
}

/// Each listener's subscriptions (table `subscription`, journal v19). Triggers log every one made
/// or ended for the listener's phones; the podcast's union of wishes is rewritten in the same
/// transaction as the subscription that changes it.
extension SQLiteListeningStore {
    @discardableResult
    package func subscribe(_ listener: String, podcastId: Int64, now: Date) async throws -> Subscription {
        try await writer.write { db in
            if let existing = try Subscription.fetchOne(db, key: ["listener": listener, "podcastId": podcastId]) { return existing }
            guard try PodcastRecord.exists(db, key: podcastId) else {
                throw FerryError(.notFound, "There is no podcast \(podcastId). `ferry podcast ls` lists them.")
            }
            let subscription = Subscription(listener: listener, podcastId: podcastId, createdAt: now)
            try subscription.insert(db)
            try Self.updateUnion(podcastId, db)
            return subscription
        }
    }

    package func subscriptions(of listener: String) async throws -> [(podcast: PodcastRecord, subscription: Subscription)] {
        try await writer.read { db in
            let subscriptions = try Subscription.filter(Column("listener") == listener).fetchAll(db)
            let podcasts = try PodcastRecord.fetchAll(db, keys: subscriptions.map(\.podcastId))
            let byId = Dictionary(uniqueKeysWithValues: subscriptions.map { ($0.podcastId, $0) })
            return podcasts.compactMap { podcast in byId[podcast.podcastId].map { (podcast, $0) } }
                .sorted { $0.podcast.title.localizedCaseInsensitiveCompare($1.podcast.title) == .orderedAscending }
        }
    }

    package func subscription(_ listener: String, podcastId: Int64) async throws -> Subscription? {
        try await writer.read { db in try Subscription.fetchOne(db, key: ["listener": listener, "podcastId": podcastId]) }
    }

    @discardableResult
    package func updateSubscription(
        _ listener: String, podcastId: Int64, _ body: @escaping @Sendable (inout Subscription) throws -> Void
    ) async throws -> Subscription {
        try await writer.write { db in
            guard var subscription = try Subscription.fetchOne(db, key: ["listener": listener, "podcastId": podcastId]) else {
                throw Self.notSubscribed(podcastId)
            }
            try body(&subscription)
            try subscription.update(db)
            try Self.updateUnion(podcastId, db)
            return subscription
        }
    }

    package func unsubscribe(_ listener: String, podcastId: Int64) async throws -> Int {
        try await writer.write { db in
            guard try Subscription.deleteOne(db, key: ["listener": listener, "podcastId": podcastId]) else { throw Self.notSubscribed(podcastId) }
            try Self.updateUnion(podcastId, db)
            return try Subscription.filter(Column("podcastId") == podcastId).fetchCount(db)
        }
    }

    package func episodesInUse(podcastId: Int64) async throws -> Set<Int64> {
        try await writer.read { db in
            Set(try Int64.fetchAll(
                db, sql: """
                    SELECT p.mediaId FROM playback p JOIN episode e ON e.id = p.mediaId
                        WHERE p.media = 'episode' AND e.podcastId = ? AND NOT p.played AND p.positionSeconds > 0
                    UNION SELECT u.mediaId FROM upNext u JOIN episode e ON e.id = u.mediaId WHERE u.media = 'episode' AND e.podcastId = ?
                    UNION SELECT i.mediaId FROM playlistItem i JOIN episode e ON e.id = i.mediaId WHERE i.media = 'episode' AND e.podcastId = ?
                    """, arguments: [podcastId, podcastId, podcastId]
            ))
        }
    }

    static func updateUnion(_ podcastId: Int64, _ db: Database) throws {
        let union = Subscription.union(of: try Subscription.filter(Column("podcastId") == podcastId).fetchAll(db))
        try db.execute(
            sql: "UPDATE podcast SET autoDownload = ?, keepLatest = ? WHERE id = ?", arguments: [union.autoDownload, union.keepLatest, podcastId]
        )
    }

    static func notSubscribed(_ podcastId: Int64) -> FerryError {
        FerryError(.notFound, "You are not subscribed to podcast \(podcastId). `ferry podcast ls` lists your subscriptions.")
    }
}
