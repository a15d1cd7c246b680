import FerryCore
import FerryKit
import Foundation
import GRDB

/// Transcripts indexed for search: `transcriptIndex` (one row per episode: its transcript's URL
/// and how indexing went), `transcriptCue` (the lines) and `transcriptText`, FTS5's index of
/// the lines' words.
extension SQLiteListeningStore {
    package func claimTranscripts(limit: Int, now: Date, claimedBefore: Date, retryBefore: Date) async throws -> [(episodeId: Int64, url: String)] {
        try await writer.write { db in
            let due = try Row.fetchAll(
                db, sql: """
                    SELECT e.id, e.transcriptURL FROM episode e LEFT JOIN transcriptIndex t ON t.episodeId = e.id
                    WHERE e.transcriptURL IS NOT NULL AND (t.episodeId IS NULL OR t.url != e.transcriptURL
                        OR (t.indexedAt IS NULL AND t.errorCode IS NULL AND t.claimedAt < ?)
                        OR (t.indexedAt IS NULL AND t.errorCode IS NOT NULL AND t.claimedAt < ? AND t.attempts < ?))
                    ORDER BY e.published DESC LIMIT ?
                    """, arguments: [JournalDate(claimedBefore), JournalDate(retryBefore), TranscriptLine.maximumAttempts, limit]
            ).map { (episodeId: $0[0] as Int64, url: $0[1] as String) }
            for episode in due {
                // Another URL than the one indexed starts over (its old lines are found until the new ones replace them).
                try db.execute(
                    sql: """
                        INSERT INTO transcriptIndex (episodeId, url, claimedAt) VALUES (?, ?, ?)
                        ON CONFLICT (episodeId) DO UPDATE SET claimedAt = excluded.claimedAt,
                            attempts = CASE WHEN url = excluded.url THEN attempts ELSE 0 END,
                            indexedAt = CASE WHEN url = excluded.url THEN indexedAt END,
                            errorCode = CASE WHEN url = excluded.url THEN errorCode END,
                            errorMessage = CASE WHEN url = excluded.url THEN errorMessage END, url = excluded.url
                        """, arguments: [episode.episodeId, episode.url, JournalDate(now)]
                )
            }
            return due
        }
    }

    package func indexTranscript(episodeId: Int64, url: String, cues: [TranscriptCue], now: Date) async throws {
        try await writer.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM episode WHERE id = ?)", arguments: [episodeId]) == true else { return }
            try db.execute(
                sql: """
                    INSERT INTO transcriptIndex (episodeId, url, claimedAt, indexedAt, cueCount) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (episodeId) DO UPDATE SET url = excluded.url, claimedAt = excluded.claimedAt, indexedAt = excluded.indexedAt,
                        cueCount = excluded.cueCount, errorCode = NULL, errorMessage = NULL, attempts = 0
                    """, arguments: [episodeId, url, JournalDate(now), JournalDate(now), cues.count]
            )
            try db.execute(sql: "DELETE FROM transcriptCue WHERE episodeId = ?", arguments: [episodeId])
            let insert = try db.cachedStatement(sql: "INSERT INTO transcriptCue (episodeId, startSeconds, speaker, body) VALUES (?, ?, ?, ?)")
            for cue in cues { try insert.execute(arguments: [episodeId, cue.startSeconds, cue.speaker, cue.text]) }
        }
    }

    package func transcriptFailed(episodeId: Int64, url: String, error: FerryError, now: Date) async throws {
        try await writer.write { db in
            try db.execute(
                sql: """
                    UPDATE transcriptIndex SET errorCode = ?, errorMessage = ?, attempts = attempts + 1, claimedAt = ?
                    WHERE episodeId = ? AND url = ? AND indexedAt IS NULL
                    """, arguments: [error.code.rawValue, error.message, JournalDate(now), episodeId, url]
            )
        }
    }

    package func searchTranscripts(_ listener: String, _ query: TranscriptQuery, podcastId: Int64?, limit: Int) async throws -> [TranscriptLine] {
        // Ranking (bm25) costs per line found: the newest lines found are ranked, the others
        // not read at all, so that a word said everywhere is as quick to find as a rare one.
        try await writer.read { db in
            try Row.fetchAll(
                db, sql: """
                    SELECT c.episodeId, c.startSeconds, c.speaker, c.body FROM (
                        SELECT t.rowid AS id, t.rank AS rank FROM transcriptText t JOIN transcriptCue c ON c.id = t.rowid
                        WHERE t.transcriptText MATCH ? AND c.episodeId IN (
                            SELECT e.id FROM episode e JOIN subscription s ON s.podcastId = e.podcastId WHERE s.listener = ? AND (? IS NULL OR e.podcastId = ?))
                        ORDER BY t.rowid DESC LIMIT ?
                    ) found JOIN transcriptCue c ON c.id = found.id
                    ORDER BY found.rank LIMIT ?
                    """, arguments: [query.fts5, listener, podcastId, podcastId, TranscriptLine.mostRanked, limit]
            ).map { TranscriptLine(episodeId: $0[0], seconds: $0[1], speaker: $0[2], text: $0[3]) }
        }
    }

    package func transcriptIndexStatus(_ listener: String) async throws -> TranscriptIndexStatus {
        try await writer.read { db in
            let row = try Row.fetchOne(
                db, sql: """
                    SELECT COUNT(*), COUNT(t.indexedAt), COUNT(t.errorCode) FILTER (WHERE t.indexedAt IS NULL)
                    FROM episode e JOIN subscription s ON s.podcastId = e.podcastId AND s.listener = ?
                    LEFT JOIN transcriptIndex t ON t.episodeId = e.id AND t.url = e.transcriptURL
                    WHERE e.transcriptURL IS NOT NULL
                    """, arguments: [listener]
            )
            let (all, indexed, failed): (Int, Int, Int) = (row?[0] ?? 0, row?[1] ?? 0, row?[2] ?? 0)
            return TranscriptIndexStatus(indexed: indexed, pending: all - indexed - failed, failed: failed)
        }
    }
}
