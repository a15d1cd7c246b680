import FerryCore
import FerryKit
import Foundation
import GRDB

/// Where each listener is in each episode and song (table `playback`, keyed by the listener, what
/// it is and its id), changed in one transaction each, so two browsers saving at once do not lose
/// a write.
extension SQLiteListeningStore {
    /// Applies `update` to the episode's or song's playback (none yet: from the start).
    /// - Throws: `not_found` when there is no such episode or song; `invalid_request` for a bad update.
    package func updatePlayback(_ listener: String, _ media: PlaybackMedia, id: Int64, _ update: PlaybackUpdate, now: Date) async throws -> Playback {
        try await writer.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(media.table) WHERE \(media.key) = ?)", arguments: [id]) == true else {
                throw FerryError(.notFound, "There is no \(media.noun) \(id).")
            }
            let previous = try Self.playback(listener, media, id: id, db)
            let next = try (previous ?? Playback(updatedAt: now)).applying(update, now: now)
            try Self.writePlayback(listener, media, id: id, next, db)
            if media == .episode {
                try Self.recordOwnAction(listener, episode: id, from: previous, to: next, duration: update.durationSeconds, db)
            }
            return next
        }
    }

    /// Every episode of the podcast played (their positions kept).
    package func markPlayed(_ listener: String, podcastId: Int64, now: Date) async throws {
        try await writer.write { db in
            let ids = try Int64.fetchAll(db, sql: "SELECT id FROM episode WHERE podcastId = ?", arguments: [podcastId])
            for id in ids {
                let previous = try Self.playback(listener, .episode, id: id, db)
                guard previous?.played != true else { continue }
                var next = previous ?? Playback(updatedAt: now)
                next.played = true
                next.updatedAt = now
                try Self.writePlayback(listener, .episode, id: id, next, db)
                try Self.recordOwnAction(listener, episode: id, from: previous, to: next, duration: nil, db)
            }
        }
    }

    static func writePlayback(_ listener: String, _ media: PlaybackMedia, id: Int64, _ playback: Playback, _ db: Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO playback (listener, media, mediaId, positionSeconds, played, updatedAt) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [listener, media.rawValue, id, playback.positionSeconds, playback.played, JournalDate(playback.updatedAt)]
        )
    }

    /// The playbacks of a podcast's episodes, by episode id.
    package func playbacks(_ listener: String, podcastId: Int64) async throws -> [Int64: Playback] {
        try await writer.read { db in
            try Self.rows(
                db, sql: "SELECT p.mediaId, p.positionSeconds, p.played, p.updatedAt FROM playback p JOIN episode e ON e.id = p.mediaId "
                    + "WHERE p.listener = ? AND p.media = 'episode' AND e.podcastId = ?",
                arguments: [listener, podcastId]
            )
        }
    }

    /// The playbacks of these songs or episodes, by id.
    package func playbacks(_ listener: String, _ media: PlaybackMedia, ids: [Int64]) async throws -> [Int64: Playback] {
        guard !ids.isEmpty else { return [:] }
        return try await writer.read { db in
            try Self.rows(
                db, sql: "SELECT mediaId, positionSeconds, played, updatedAt FROM playback WHERE listener = ? AND media = ? AND mediaId IN ("
                    + ids.map { _ in "?" }.joined(separator: ",") + ")",
                arguments: [listener, media.rawValue] + StatementArguments(ids)
            )
        }
    }

    static func playback(_ listener: String, _ media: PlaybackMedia, id: Int64, _ db: Database) throws -> Playback? {
        try rows(db, sql: "SELECT mediaId, positionSeconds, played, updatedAt FROM playback WHERE listener = ? AND media = ? AND mediaId = ?",
                 arguments: [listener, media.rawValue, id])[id]
    }

    private static func rows(_ db: Database, sql: String, arguments: StatementArguments) throws -> [Int64: Playback] {
        var found: [Int64: Playback] = [:]
        for row in try Row.fetchAll(db, sql: sql, arguments: arguments) {
            found[row[0]] = Playback(positionSeconds: row[1], played: row[2], updatedAt: row[3])
        }
        return found
    }
}
