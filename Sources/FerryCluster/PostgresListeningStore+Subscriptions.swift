import FerryCore
import FerryKit
import FerryListening
import Foundation
import PostgresNIO

/// Each listener's subscriptions (migration 6). A trigger logs every one made or ended for the
/// listener's phones; the podcast's union of wishes is rewritten in the same transaction as the
/// subscription that changes it.
extension PostgresListeningStore {
    @discardableResult
    package func subscribe(_ listener: String, podcastId: Int64, now: Date) async throws -> Subscription {
        try await journal.write { connection in try await self.subscribe(listener, podcastId: podcastId, now: now, connection) }
    }

    @discardableResult
    func subscribe(_ listener: String, podcastId: Int64, now: Date, _ connection: PostgresConnection) async throws -> Subscription {
        guard try await journal.one(Bool.self, "SELECT EXISTS (SELECT 1 FROM podcast WHERE id = \(podcastId))", connection) else {
            throw FerryError(.notFound, "There is no podcast \(podcastId). `ferry podcast ls` lists them.")
        }
        let inserted = try await connection.query(
            #"""
            INSERT INTO subscription (listener, "podcastId", "createdAt") VALUES (\#(listener), \#(podcastId), \#(now))
            ON CONFLICT DO NOTHING RETURNING listener
            """#, logger: logger
        )
        if try await !isEmpty(inserted) { try await updateUnion(podcastId, connection) }
        guard let subscription = try await subscriptions(#"WHERE listener = \#(listener) AND "podcastId" = \#(podcastId)"#, connection).first else {
            throw FerryError(.internalError, "Subscription to podcast \(podcastId) was neither added nor found.")
        }
        return subscription
    }

    package func subscriptions(of listener: String) async throws -> [(podcast: PodcastRecord, subscription: Subscription)] {
        let found: [(podcast: PodcastRecord, subscription: Subscription)] = try await journal.read { connection in
            let subscriptions = try await self.subscriptions("WHERE listener = \(listener)", connection)
            let podcasts = try await self.podcasts(
                #"SELECT p.id, p.record::text FROM podcast p JOIN subscription s ON s."podcastId" = p.id WHERE s.listener = \#(listener)"#, connection
            )
            let byId = Dictionary(uniqueKeysWithValues: subscriptions.map { ($0.podcastId, $0) })
            return podcasts.compactMap { podcast in byId[podcast.podcastId].map { (podcast, $0) } }
        }
        return found.sorted { $0.podcast.title.localizedCaseInsensitiveCompare($1.podcast.title) == .orderedAscending }
    }

    package func subscription(_ listener: String, podcastId: Int64) async throws -> Subscription? {
        try await journal.read { connection in
            try await self.subscriptions(#"WHERE listener = \#(listener) AND "podcastId" = \#(podcastId)"#, connection).first
        }
    }

    @discardableResult
    package func updateSubscription(
        _ listener: String, podcastId: Int64, _ body: @escaping @Sendable (inout Subscription) throws -> Void
    ) async throws -> Subscription {
        try await journal.write { connection in
            guard var subscription = try await self.subscriptions(
                #"WHERE listener = \#(listener) AND "podcastId" = \#(podcastId) FOR UPDATE"#, connection
            ).first else { throw Self.notSubscribed(podcastId) }
            try body(&subscription)
            try await connection.query(
                #"""
                UPDATE subscription SET "autoDownload" = \#(Int64(subscription.autoDownload)), "keepLatest" = \#(subscription.keepLatest.map(Int64.init)),
                    "playbackSpeed" = \#(subscription.playbackSpeed), "oldestFirst" = \#(subscription.oldestFirst)
                WHERE listener = \#(listener) AND "podcastId" = \#(podcastId)
                """#, logger: self.logger
            )
            try await self.updateUnion(podcastId, connection)
            return subscription
        }
    }

    package func unsubscribe(_ listener: String, podcastId: Int64) async throws -> Int {
        try await journal.write { connection in
            let deleted = try await connection.query(
                #"DELETE FROM subscription WHERE listener = \#(listener) AND "podcastId" = \#(podcastId) RETURNING listener"#, logger: self.logger
            )
            guard try await !self.isEmpty(deleted) else { throw Self.notSubscribed(podcastId) }
            try await self.updateUnion(podcastId, connection)
            return Int(try await self.journal.one(Int64.self, #"SELECT COUNT(*) FROM subscription WHERE "podcastId" = \#(podcastId)"#, connection))
        }
    }

    package func episodesInUse(podcastId: Int64) async throws -> Set<Int64> {
        try await journal.read { connection in
            var ids: Set<Int64> = []
            let rows = try await connection.query(
                #"""
                SELECT p."mediaId" FROM playback p JOIN episode e ON e.id = p."mediaId"
                    WHERE p.media = 'episode' AND e."podcastId" = \#(podcastId) AND NOT p.played AND p."positionSeconds" > 0
                UNION SELECT u."mediaId" FROM "upNext" u JOIN episode e ON e.id = u."mediaId" WHERE u.media = 'episode' AND e."podcastId" = \#(podcastId)
                UNION SELECT i."mediaId" FROM "playlistItem" i JOIN episode e ON e.id = i."mediaId" WHERE i.media = 'episode' AND e."podcastId" = \#(podcastId)
                """#, logger: self.logger
            )
            for try await id in rows.decode(Int64.self) { ids.insert(id) }
            return ids
        }
    }

    /// Rewrites the podcast's record with its subscribers' union (``Subscription/union(of:)``).
    func updateUnion(_ podcastId: Int64, _ connection: PostgresConnection) async throws {
        let union = Subscription.union(of: try await subscriptions(#"WHERE "podcastId" = \#(podcastId)"#, connection))
        let keepLatest = union.keepLatest.map { "\($0)" } ?? "null"
        try await connection.query(
            #"""
            UPDATE podcast SET record = jsonb_set(jsonb_set(record, '{autoDownload}', to_jsonb(\#(Int64(union.autoDownload)))),
                '{keepLatest}', \#(keepLatest)::jsonb) WHERE id = \#(podcastId)
            """#, logger: logger
        )
    }

    /// - Parameter condition: `WHERE …` (and `FOR UPDATE`) of a query on `subscription`.
    private func subscriptions(_ condition: PostgresQuery, _ connection: PostgresConnection) async throws -> [Subscription] {
        var query = PostgresQuery(
            unsafeSQL: #"SELECT listener, "podcastId", "autoDownload", "keepLatest", "playbackSpeed", "oldestFirst", "createdAt" FROM subscription "#
        )
        query.sql += condition.sql
        query.binds = condition.binds
        var found: [Subscription] = []
        let rows = try await connection.query(query, logger: logger)
        for try await (listener, podcastId, autoDownload, keepLatest, speed, oldestFirst, createdAt) in rows
            .decode((String, Int64, Int32, Int32?, Double?, Bool, Date).self)
        {
            var subscription = Subscription(listener: listener, podcastId: podcastId, createdAt: createdAt)
            subscription.autoDownload = Int(autoDownload)
            subscription.keepLatest = keepLatest.map(Int.init)
            subscription.playbackSpeed = speed
            subscription.oldestFirst = oldestFirst
            found.append(subscription)
        }
        return found
    }

    static func notSubscribed(_ podcastId: Int64) -> FerryError {
        FerryError(.notFound, "You are not subscribed to podcast \(podcastId). `ferry podcast ls` lists your subscriptions.")
    }
}
