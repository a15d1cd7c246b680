import FerryCore
import FerryFeeds
import FerryKit
import Foundation
import GRDB

/// ``ListeningStore`` in the daemon's SQLite journal: podcasts, episodes and catalog songs.
extension SQLiteListeningStore: ListeningStore {
    package func insertPodcast(_ new: PodcastRecord) async throws -> (record: PodcastRecord, inserted: Bool) {
        try await writer.write { db in
            if let existing = try PodcastRecord.filter(Column("feedURL") == new.feedURL).fetchOne(db) {
                return (existing, false)
            }
            var record = new
            try record.insert(db)
            return (record, true)
        }
    }

    package func podcast(id: Int64) async throws -> PodcastRecord? {
        try await writer.read { db in try PodcastRecord.fetchOne(db, key: id) }
    }

    package func podcast(feedURL: String) async throws -> PodcastRecord? {
        try await writer.read { db in try PodcastRecord.filter(Column("feedURL") == feedURL).fetchOne(db) }
    }

    package func podcasts() async throws -> [PodcastRecord] {
        try await writer.read { db in try PodcastRecord.order(Column("title").collating(.localizedCaseInsensitiveCompare)).fetchAll(db) }
    }

    @discardableResult
    package func updatePodcast(id: Int64, _ body: @escaping @Sendable (inout PodcastRecord) throws -> Void) async throws -> PodcastRecord {
        try await writer.write { db in
            guard var record = try PodcastRecord.fetchOne(db, key: id) else {
                throw FerryError(.notFound, "There is no podcast \(id). `ferry podcast ls` lists them.")
            }
            try body(&record)
            record.updatedAt = Date()
            try record.update(db)
            return record
        }
    }

    package func deletePodcast(id: Int64) async throws {
        try await writer.write { db in
            // First, while the podcast's URL is there for the subscriptions' trigger to log.
            try db.execute(sql: "DELETE FROM subscription WHERE podcastId = ?", arguments: [id])
            guard try PodcastRecord.deleteOne(db, key: id) else {
                throw FerryError(.notFound, "There is no podcast \(id). `ferry podcast ls` lists them.")
            }
        }
    }

    package func mergeEpisodes(podcastId: Int64, _ episodes: [FeedEpisode], markNew: Bool, now: Date) async throws -> [EpisodeRecord] {
        try await writer.write { db in
            let existing = try EpisodeRecord.filter(Column("podcastId") == podcastId).fetchAll(db)
            let (changed, added) = EpisodeRecord.merge(episodes, into: existing, podcastId: podcastId, markNew: markNew, now: now)
            for record in changed { try record.update(db) }
            return try added.map { record in
                var record = record
                try record.insert(db)
                return record
            }
        }
    }

    @discardableResult
    package func forgetGoneEpisodes(podcastId: Int64, goneBefore: Date) async throws -> Int {
        try await writer.write { db in
            try db.execute(
                sql: """
                    DELETE FROM episode WHERE podcastId = ? AND goneSince < ? AND transferId IS NULL AND filePath IS NULL
                        AND id NOT IN (SELECT mediaId FROM playback WHERE media = 'episode')
                        AND id NOT IN (SELECT mediaId FROM upNext WHERE media = 'episode')
                        AND id NOT IN (SELECT mediaId FROM bookmark WHERE media = 'episode')
                        AND id NOT IN (SELECT mediaId FROM playlistItem WHERE media = 'episode')
                    """, arguments: [podcastId, goneBefore]
            )
            return db.changesCount
        }
    }

    package func episodes(podcastId: Int64) async throws -> [EpisodeRecord] {
        try await writer.read { db in
            try EpisodeRecord.filter(Column("podcastId") == podcastId)
                .order(Column("published").desc, Column("id").desc)
                .fetchAll(db)
        }
    }

    package func episode(id: Int64) async throws -> EpisodeRecord? {
        try await writer.read { db in try EpisodeRecord.fetchOne(db, key: id) }
    }

    @discardableResult
    package func updateEpisode(id: Int64, _ body: @escaping @Sendable (inout EpisodeRecord) throws -> Void) async throws -> EpisodeRecord {
        try await writer.write { db in
            guard var record = try EpisodeRecord.fetchOne(db, key: id) else {
                throw FerryError(.notFound, "There is no episode \(id).")
            }
            try body(&record)
            try record.update(db)
            return record
        }
    }

    package func markEpisodesSeen(podcastId: Int64) async throws {
        try await writer.write { db in
            try db.execute(sql: "UPDATE episode SET isNew = 0 WHERE podcastId = ?", arguments: [podcastId])
        }
    }

    package func episodeCounts() async throws -> [Int64: (total: Int, new: Int, downloaded: Int)] {
        try await writer.read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT e.podcastId AS podcastId, COUNT(*) AS total,
                       SUM(CASE WHEN e.isNew AND (t.state IS NULL OR t.state != 'completed') AND e.filePath IS NULL THEN 1 ELSE 0 END) AS fresh,
                       SUM(CASE WHEN t.state = 'completed' OR e.filePath IS NOT NULL THEN 1 ELSE 0 END) AS downloaded
                FROM episode e LEFT JOIN transfer t ON t.id = e.transferId
                GROUP BY e.podcastId
                """)
            var counts: [Int64: (Int, Int, Int)] = [:]
            for row in rows { counts[row["podcastId"]] = (row["total"], row["fresh"], row["downloaded"]) }
            return counts
        }
    }

    // MARK: Refreshing

    /// One machine has one daemon refreshing its feeds.
    package func duringRefreshTurn<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) async throws -> Result? { try await body() }
    package func refreshingPodcast<Result: Sendable>(_ id: Int64, _ body: @escaping @Sendable () async throws -> Result) async throws -> Result { try await body() }

    // MARK: Catalog tracks

    package func saveTrack(_ track: TrackRecord) async throws {
        try await writer.write { db in try track.save(db) }
    }

    package func tracks(ids: [Int64]) async throws -> [Int64: TrackRecord] {
        try await writer.read { db in
            let records = try TrackRecord.filter(ids.contains(Column("trackId"))).fetchAll(db)
            return Dictionary(records.map { ($0.trackId, $0) }, uniquingKeysWith: { a, _ in a })
        }
    }
}

/// A row of the `track` table: a catalog song whose preview was downloaded.
package struct TrackRecord: Codable, Sendable, Hashable, FetchableRecord, PersistableRecord {
    package static let databaseTableName = "track"
    package var trackId: Int64
    package var transferId: Int64?
    package var title: String
    package var artist: String?
    package var collection: String?
    package var artworkURL: String?
    package var previewURL: String?
    package var durationSeconds: Double?
    package var createdAt: Date

    package init(
        trackId: Int64, transferId: Int64?, title: String, artist: String?, collection: String?, artworkURL: String?,
        previewURL: String?, durationSeconds: Double?, createdAt: Date = Date()
    ) {
        self.trackId = trackId
        self.transferId = transferId
        self.title = title
        self.artist = artist
        self.collection = collection
        self.artworkURL = artworkURL
        self.previewURL = previewURL
        self.durationSeconds = durationSeconds
        self.createdAt = createdAt
    }
}
