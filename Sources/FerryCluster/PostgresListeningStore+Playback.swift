import FerryCore
import FerryKit
import FerryListening
import Foundation
import PostgresNIO

/// Each listener's playback and Up Next, each change one transaction, so two browsers (on two
/// members) never lose each other's writes or interleave their lists.
extension PostgresListeningStore {
    package func updatePlayback(_ listener: String, _ media: PlaybackMedia, id: Int64, _ update: PlaybackUpdate, now: Date) async throws -> Playback {
        try await journal.write { connection in
            guard try await self.exists(media, id: id, connection) else {
                throw FerryError(.notFound, "There is no \(media.noun) \(id).")
            }
            let previous = try await self.playbacks(listener, media, ids: [id], connection, lock: true)[id]
            let next = try (previous ?? Playback(updatedAt: now)).applying(update, now: now)
            try await self.write(listener, media, id: id, next, connection)
            if media == .episode {
                try await self.recordOwnAction(listener, episode: id, from: previous, to: next, duration: update.durationSeconds, connection)
            }
            return next
        }
    }

    package func markPlayed(_ listener: String, podcastId: Int64, now: Date) async throws {
        try await journal.write { connection in
            var ids: [Int64] = []
            for try await id in try await connection.query(#"SELECT id FROM episode WHERE "podcastId" = \#(podcastId)"#, logger: self.logger)
                .decode(Int64.self) { ids.append(id) }
            let playbacks = try await self.playbacks(listener, .episode, ids: ids, connection, lock: true)
            for id in ids where playbacks[id]?.played != true {
                let previous = playbacks[id]
                var next = previous ?? Playback(updatedAt: now)
                next.played = true
                next.updatedAt = now
                try await self.write(listener, .episode, id: id, next, connection)
                try await self.recordOwnAction(listener, episode: id, from: previous, to: next, duration: nil, connection)
            }
        }
    }

    package func playbacks(_ listener: String, podcastId: Int64) async throws -> [Int64: Playback] {
        try await journal.read { connection in
            try await self.playbacks(
                #"""
                SELECT p."mediaId", p."positionSeconds", p.played, p."updatedAt" FROM playback p JOIN episode e ON e.id = p."mediaId"
                WHERE p.listener = \#(listener) AND p.media = 'episode' AND e."podcastId" = \#(podcastId)
                """#, connection
            )
        }
    }

    package func playbacks(_ listener: String, _ media: PlaybackMedia, ids: [Int64]) async throws -> [Int64: Playback] {
        guard !ids.isEmpty else { return [:] }
        return try await journal.read { connection in try await self.playbacks(listener, media, ids: ids, connection, lock: false) }
    }

    // MARK: Up Next

    package func upNextEntries(_ listener: String) async throws -> [UpNextEntry] {
        try await journal.read { connection in
            let rows = try await connection.query(
                #"""
                SELECT u.media, u."mediaId" FROM "upNext" u
                WHERE u.listener = \#(listener) AND ((u.media = 'episode' AND EXISTS (SELECT 1 FROM episode e WHERE e.id = u."mediaId"))
                   OR (u.media = 'track' AND EXISTS (SELECT 1 FROM track t WHERE t."trackId" = u."mediaId")))
                ORDER BY u.rank
                """#, logger: self.logger
            )
            var entries: [UpNextEntry] = []
            for try await (kind, id) in rows.decode((String, Int64).self) {
                if let kind = UpNextEntry.Kind(rawValue: kind) { entries.append(UpNextEntry(kind: kind, id: id)) }
            }
            return entries
        }
    }

    package func setUpNext(_ listener: String, _ entries: [UpNextEntry]) async throws {
        let unique = try UpNext.validated(entries)
        try await journal.write { connection in
            for entry in unique {
                let media = PlaybackMedia(rawValue: entry.kind.rawValue) ?? .episode
                guard try await self.exists(media, id: entry.id, connection) else { throw UpNext.missing(entry) }
            }
            // Taken first: two lists saved at once are one after the other.
            try await connection.query(#"LOCK TABLE "upNext" IN EXCLUSIVE MODE"#, logger: self.logger)
            try await connection.query(#"DELETE FROM "upNext" WHERE listener = \#(listener)"#, logger: self.logger)
            guard !unique.isEmpty else { return }
            var binds = PostgresBindings(capacity: unique.count * 2 + 1)
            binds.append(listener)
            for entry in unique {
                binds.append(entry.kind.rawValue)
                binds.append(entry.id)
            }
            let values = unique.indices.map { "($1, \($0), $\($0 * 2 + 2), $\($0 * 2 + 3))" }.joined(separator: ", ")
            try await connection.query(
                PostgresQuery(unsafeSQL: #"INSERT INTO "upNext" (listener, rank, media, "mediaId") VALUES "# + values, binds: binds), logger: self.logger
            )
        }
    }

    // MARK: Rows

    func exists(_ media: PlaybackMedia, id: Int64, _ connection: PostgresConnection) async throws -> Bool {
        let query: PostgresQuery = media == .episode
            ? "SELECT EXISTS (SELECT 1 FROM episode WHERE id = \(id))"
            : #"SELECT EXISTS (SELECT 1 FROM track WHERE "trackId" = \#(id))"#
        return try await journal.one(Bool.self, query, connection)
    }

    func write(_ listener: String, _ media: PlaybackMedia, id: Int64, _ playback: Playback, _ connection: PostgresConnection) async throws {
        try await connection.query(
            #"""
            INSERT INTO playback (listener, media, "mediaId", "positionSeconds", played, "updatedAt")
            VALUES (\#(listener), \#(media.rawValue), \#(id), \#(playback.positionSeconds), \#(playback.played), \#(playback.updatedAt))
            ON CONFLICT (listener, media, "mediaId") DO UPDATE SET "positionSeconds" = excluded."positionSeconds", played = excluded.played,
                "updatedAt" = excluded."updatedAt"
            """#, logger: logger
        )
    }

    /// - Parameter lock: lock the rows for this transaction's change.
    func playbacks(
        _ listener: String, _ media: PlaybackMedia, ids: [Int64], _ connection: PostgresConnection, lock: Bool
    ) async throws -> [Int64: Playback] {
        var binds = PostgresBindings(capacity: 3)
        binds.append(media.rawValue)
        binds.append(ids)
        binds.append(listener)
        let sql = #"SELECT "mediaId", "positionSeconds", played, "updatedAt" FROM playback WHERE media = $1 AND "mediaId" = ANY($2) AND listener = $3"#
        return try await playbacks(PostgresQuery(unsafeSQL: sql + (lock ? " FOR UPDATE" : ""), binds: binds), connection)
    }

    private func playbacks(_ query: PostgresQuery, _ connection: PostgresConnection) async throws -> [Int64: Playback] {
        var found: [Int64: Playback] = [:]
        for try await (id, position, played, updatedAt) in try await connection.query(query, logger: logger).decode((Int64, Double, Bool, Date).self) {
            found[id] = Playback(positionSeconds: position, played: played, updatedAt: updatedAt)
        }
        return found
    }
}
