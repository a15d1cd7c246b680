import FerryCore
import FerryFeeds
import FerryKit
import FerryListening
import Foundation
import Logging
import PostgresNIO

/// ``ListeningStore`` in a cluster's PostgreSQL database, beside the queue: every member shows
/// and changes one library. Podcasts, episodes and catalog songs are kept as their records' JSON
/// with generated key columns (``PostgresSchema``, migration 3); playback, Up Next and sync
/// have columns, as in SQLite. Calls wait out a lost server as the journal's do.
package final class PostgresListeningStore: ListeningStore {
    let journal: PostgresJournal
    var logger: Logger { journal.logger }

    /// Shares `journal`'s connections (and its schema, which includes this store's tables).
    package init(journal: PostgresJournal) {
        self.journal = journal
    }

    // MARK: Podcasts

    package func insertPodcast(_ new: PodcastRecord) async throws -> (record: PodcastRecord, inserted: Bool) {
        let json = try Self.json(new)
        return try await journal.write { connection in
            let rows = try await connection.query(
                #"INSERT INTO podcast (record) VALUES (\#(json)::jsonb) ON CONFLICT ("feedURL") DO NOTHING RETURNING id"#, logger: self.logger
            )
            for try await id in rows.decode(Int64.self) {
                var record = new
                record.id = id
                return (record, true)
            }
            guard let existing = try await self.podcasts(#"SELECT id, record::text FROM podcast WHERE "feedURL" = \#(new.feedURL)"#, connection).first
            else { throw FerryError(.internalError, "Podcast \(new.feedURL) was neither added nor found.") }
            return (existing, false)
        }
    }

    package func podcast(id: Int64) async throws -> PodcastRecord? {
        try await journal.read { connection in try await self.podcasts("SELECT id, record::text FROM podcast WHERE id = \(id)", connection).first }
    }

    package func podcast(feedURL: String) async throws -> PodcastRecord? {
        try await journal.read { connection in
            try await self.podcasts(#"SELECT id, record::text FROM podcast WHERE "feedURL" = \#(feedURL)"#, connection).first
        }
    }

    /// By title as the SQLite journal orders them (Foundation's case-insensitive comparison).
    package func podcasts() async throws -> [PodcastRecord] {
        try await journal.read { connection in
            try await self.podcasts("SELECT id, record::text FROM podcast ORDER BY id", connection)
        }.sorted { $0.title.localizedCaseInsensitiveCompare($1.title) == .orderedAscending }
    }

    @discardableResult
    package func updatePodcast(id: Int64, _ body: @escaping @Sendable (inout PodcastRecord) throws -> Void) async throws -> PodcastRecord {
        try await update(PodcastRecord.self, id: id, missing: "There is no podcast \(id). `ferry podcast ls` lists them.") { record in
            try body(&record)
            record.updatedAt = Date()
        }
    }

    package func deletePodcast(id: Int64) async throws {
        try await journal.write { connection in
            // First, while the podcast's URL is there for the subscriptions' trigger to log.
            try await connection.query(#"DELETE FROM subscription WHERE "podcastId" = \#(id)"#, logger: self.logger)
            let deleted = try await connection.query("DELETE FROM podcast WHERE id = \(id) RETURNING id", logger: self.logger)
            guard try await !self.isEmpty(deleted) else { throw FerryError(.notFound, "There is no podcast \(id). `ferry podcast ls` lists them.") }
        }
    }

    // MARK: Episodes

    package func mergeEpisodes(podcastId: Int64, _ episodes: [FeedEpisode], markNew: Bool, now: Date) async throws -> [EpisodeRecord] {
        try await journal.write { connection in
            let existing = try await self.episodes(#"SELECT id, record::text FROM episode WHERE "podcastId" = \#(podcastId)"#, connection)
            let (changed, added) = EpisodeRecord.merge(episodes, into: existing, podcastId: podcastId, markNew: markNew, now: now)
            for record in changed {
                try await connection.query("UPDATE episode SET record = \(try Self.json(record))::jsonb WHERE id = \(record.episodeId)", logger: self.logger)
            }
            // Many rows to a statement (a feed's first fetch adds every episode); ids by guid,
            // which is unique within the podcast.
            var ids: [String: Int64] = [:]
            for start in stride(from: 0, to: added.count, by: 1_000) {
                let batch = added[start..<min(start + 1_000, added.count)]
                var binds = PostgresBindings(capacity: batch.count)
                for record in batch { binds.append(try Self.json(record)) }
                let values = (1...batch.count).map { "($\($0)::jsonb)" }.joined(separator: ", ")
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: "INSERT INTO episode (record) VALUES \(values) RETURNING id, guid", binds: binds), logger: self.logger
                )
                for try await (id, guid) in rows.decode((Int64, String).self) { ids[guid] = id }
            }
            return added.map { record in
                var record = record
                record.id = ids[record.guid]
                return record
            }
        }
    }

    @discardableResult
    package func forgetGoneEpisodes(podcastId: Int64, goneBefore: Date) async throws -> Int {
        try await journal.write { connection in
            let rows = try await connection.query(
                #"""
                DELETE FROM episode e WHERE "podcastId" = \#(podcastId)
                    AND (record->>'goneSince')::double precision < \#(goneBefore.timeIntervalSince1970)
                    AND "transferId" IS NULL AND record->>'filePath' IS NULL
                    AND NOT EXISTS (SELECT 1 FROM playback p WHERE p.media = 'episode' AND p."mediaId" = e.id)
                    AND NOT EXISTS (SELECT 1 FROM "upNext" u WHERE u.media = 'episode' AND u."mediaId" = e.id)
                    AND NOT EXISTS (SELECT 1 FROM bookmark b WHERE b.media = 'episode' AND b."mediaId" = e.id)
                    AND NOT EXISTS (SELECT 1 FROM "playlistItem" i WHERE i.media = 'episode' AND i."mediaId" = e.id)
                RETURNING id
                """#, logger: self.logger
            )
            var count = 0
            for try await _ in rows { count += 1 }
            return count
        }
    }

    /// Newest first; episodes without a date last, as in SQLite.
    package func episodes(podcastId: Int64) async throws -> [EpisodeRecord] {
        try await journal.read { connection in
            try await self.episodes(
                #"""
                SELECT id, record::text FROM episode WHERE "podcastId" = \#(podcastId)
                ORDER BY (record->>'published')::double precision DESC NULLS LAST, id DESC
                """#, connection
            )
        }
    }

    package func episode(id: Int64) async throws -> EpisodeRecord? {
        try await journal.read { connection in try await self.episodes("SELECT id, record::text FROM episode WHERE id = \(id)", connection).first }
    }

    @discardableResult
    package func updateEpisode(id: Int64, _ body: @escaping @Sendable (inout EpisodeRecord) throws -> Void) async throws -> EpisodeRecord {
        try await update(EpisodeRecord.self, id: id, missing: "There is no episode \(id).", body)
    }

    package func markEpisodesSeen(podcastId: Int64) async throws {
        _ = try await journal.write { connection in
            try await connection.query(
                #"""
                UPDATE episode SET record = jsonb_set(record, '{isNew}', 'false')
                WHERE "podcastId" = \#(podcastId) AND (record->>'isNew')::boolean
                """#, logger: self.logger
            )
        }
    }

    package func episodeCounts() async throws -> [Int64: (total: Int, new: Int, downloaded: Int)] {
        try await journal.read { connection in
            let rows = try await connection.query(
                """
                SELECT e."podcastId", COUNT(*),
                       COUNT(*) FILTER (WHERE (e.record->>'isNew')::boolean AND t.state IS DISTINCT FROM 'completed' AND e.record->>'filePath' IS NULL),
                       COUNT(*) FILTER (WHERE t.state = 'completed' OR e.record->>'filePath' IS NOT NULL)
                FROM episode e LEFT JOIN transfer t ON t.id = e."transferId"
                GROUP BY e."podcastId"
                """, logger: self.logger
            )
            var counts: [Int64: (total: Int, new: Int, downloaded: Int)] = [:]
            for try await (id, total, fresh, downloaded) in rows.decode((Int64, Int64, Int64, Int64).self) {
                counts[id] = (Int(total), Int(fresh), Int(downloaded))
            }
            return counts
        }
    }

    // MARK: Catalog songs

    package func saveTrack(_ track: TrackRecord) async throws {
        let json = try Self.json(track)
        _ = try await journal.write { connection in
            try await connection.query(
                #"""
                INSERT INTO track ("trackId", record) VALUES (\#(track.trackId), \#(json)::jsonb)
                ON CONFLICT ("trackId") DO UPDATE SET record = excluded.record
                """#, logger: self.logger
            )
        }
    }

    package func tracks(ids: [Int64]) async throws -> [Int64: TrackRecord] {
        guard !ids.isEmpty else { return [:] }
        return try await journal.read { connection in
            let rows = try await connection.query(#"SELECT record::text FROM track WHERE "trackId" = ANY(\#(ids))"#, logger: self.logger)
            var tracks: [Int64: TrackRecord] = [:]
            for try await json in rows.decode(String.self) {
                let track: TrackRecord = try Self.decoded(json)
                tracks[track.trackId] = track
            }
            return tracks
        }
    }

    // MARK: Refreshing, one member at a time

    /// Holds the refresh turn's advisory lock for `body`; nil at once when another member holds it.
    package func duringRefreshTurn<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) async throws -> Result? {
        let key = PostgresSchema.Lock.refreshTurn.rawValue
        return try await holding(take: "SELECT pg_try_advisory_lock(\(key))", release: "SELECT pg_advisory_unlock(\(key))", body)
    }

    /// Waits for the podcast's advisory lock, and holds it for `body`.
    package func refreshingPodcast<Result: Sendable>(_ id: Int64, _ body: @escaping @Sendable () async throws -> Result) async throws -> Result {
        // The two-key form: Ferry's class, then the podcast (ids beyond 2³¹ share keys, and so turns).
        let (lock, object) = (PostgresSchema.Lock.podcastRefresh, Int32(truncatingIfNeeded: id))
        let held = try await holding(
            take: "SELECT TRUE FROM (SELECT pg_advisory_lock(\(lock), \(object))) AS taken",
            release: "SELECT pg_advisory_unlock(\(lock), \(object))", body
        )
        guard let held else { throw FerryError(.internalError, "The refresh lock of podcast \(id) was not taken.") }
        return held
    }

    /// `body` while one connection holds a session's advisory lock (`take` answers whether it
    /// got it). A member that dies gives the lock up with its connection. While the server
    /// cannot be reached, this waits and tries again, as every call does; a refresh cut off
    /// that way runs again (a conditional GET, and merges by guid: no harm).
    private func holding<Result: Sendable>(
        function: String = #function, take: PostgresQuery, release: PostgresQuery, _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result? {
        try await journal.retrying(function, stuck: .seconds(86_400)) { connected in
            try await self.journal.client.withConnection { connection in
                connected()
                guard try await self.journal.one(Bool.self, take, connection) else { return nil }
                let result: Swift.Result<Result, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                do {
                    _ = try await PostgresJournal.attempt(limit: .seconds(5), stuck: .seconds(5)) { given in
                        given()
                        return try await connection.query(release, logger: self.logger)
                    }
                } catch {
                    // The session's end gives the lock back. A connection the server dropped
                    // under the body was seen to leave this statement waiting for ever.
                    self.logger.warning("could not give an advisory lock back; closing its connection", metadata: [
                        "call": "\(function)", "error": "\(String(reflecting: error))",
                    ])
                    try? await connection.close()
                }
                return try result.get()
            }
        }
    }

    // MARK: Records as JSON

    /// Dates as seconds since 1970, so the database can compare them (`published`).
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decoded<Value: Decodable>(_ json: String) throws -> Value {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(Value.self, from: Data(json.utf8))
    }

    /// Changes a record kept as JSON in one transaction, its row locked. - Throws: `not_found` with `missing`.
    private func update<Record: RecordWithID>(
        _: Record.Type, id: Int64, missing: String, _ body: @escaping @Sendable (inout Record) throws -> Void
    ) async throws -> Record {
        let table = Record.table
        return try await journal.write { connection in
            let query = PostgresQuery(unsafeSQL: "SELECT id, record::text FROM \(table) WHERE id = $1 FOR UPDATE", binds: Self.binds(id))
            guard var record = try await self.records(Record.self, query, connection).first else { throw FerryError(.notFound, missing) }
            try body(&record)
            var binds = Self.binds(try Self.json(record))
            binds.append(id)
            try await connection.query(PostgresQuery(unsafeSQL: "UPDATE \(table) SET record = $1::jsonb WHERE id = $2", binds: binds), logger: self.logger)
            return record
        }
    }

    private static func binds(_ value: some PostgresDynamicTypeEncodable) -> PostgresBindings {
        var binds = PostgresBindings(capacity: 2)
        binds.append(value)
        return binds
    }

    /// Whether a statement returned no row (all read, so the connection is free for the next).
    func isEmpty(_ rows: PostgresRowSequence) async throws -> Bool {
        var count = 0
        for try await _ in rows { count += 1 }
        return count == 0
    }

    /// Rows of `id, record::text`, with the id in each record.
    func records<Record: RecordWithID>(_: Record.Type, _ query: PostgresQuery, _ connection: PostgresConnection) async throws -> [Record] {
        var records: [Record] = []
        for try await (id, json) in try await connection.query(query, logger: logger).decode((Int64, String).self) {
            var record: Record = try Self.decoded(json)
            record.id = id
            records.append(record)
        }
        return records
    }

    func podcasts(_ query: PostgresQuery, _ connection: PostgresConnection) async throws -> [PodcastRecord] {
        try await records(PodcastRecord.self, query, connection)
    }

    func episodes(_ query: PostgresQuery, _ connection: PostgresConnection) async throws -> [EpisodeRecord] {
        try await records(EpisodeRecord.self, query, connection)
    }
}

/// A record kept as JSON in `table`, whose id is its row's.
protocol RecordWithID: Codable, Sendable {
    static var table: String { get }
    var id: Int64? { get set }
}

extension PodcastRecord: RecordWithID {
    static var table: String { "podcast" }
}

extension EpisodeRecord: RecordWithID {
    static var table: String { "episode" }
}
