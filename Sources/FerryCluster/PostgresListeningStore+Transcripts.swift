import FerryCore
import FerryKit
import FerryListening
import Foundation
import PostgresNIO

/// Transcripts indexed for search, as in SQLite; the words are PostgreSQL's full-text search
/// (a GIN index over each line's `tsvector`).
extension PostgresListeningStore {
    package func claimTranscripts(limit: Int, now: Date, claimedBefore: Date, retryBefore: Date) async throws -> [(episodeId: Int64, url: String)] {
        try await journal.write { connection in
            // Two members may claim one episode at the same moment: indexing it twice is harmless.
            let rows = try await connection.query(
                #"""
                INSERT INTO "transcriptIndex" ("episodeId", url, "claimedAt")
                SELECT e.id, e.record->>'transcriptURL', \#(now) FROM episode e LEFT JOIN "transcriptIndex" t ON t."episodeId" = e.id
                WHERE e.record->>'transcriptURL' IS NOT NULL AND (t."episodeId" IS NULL OR t.url <> e.record->>'transcriptURL'
                    OR (t."indexedAt" IS NULL AND t."errorCode" IS NULL AND t."claimedAt" < \#(claimedBefore))
                    OR (t."indexedAt" IS NULL AND t."errorCode" IS NOT NULL AND t."claimedAt" < \#(retryBefore) AND t.attempts < \#(TranscriptLine.maximumAttempts)))
                ORDER BY (e.record->>'published')::double precision DESC NULLS LAST LIMIT \#(limit)
                ON CONFLICT ("episodeId") DO UPDATE SET "claimedAt" = EXCLUDED."claimedAt",
                    attempts = CASE WHEN "transcriptIndex".url = EXCLUDED.url THEN "transcriptIndex".attempts ELSE 0 END,
                    "indexedAt" = CASE WHEN "transcriptIndex".url = EXCLUDED.url THEN "transcriptIndex"."indexedAt" END,
                    "errorCode" = CASE WHEN "transcriptIndex".url = EXCLUDED.url THEN "transcriptIndex"."errorCode" END,
                    "errorMessage" = CASE WHEN "transcriptIndex".url = EXCLUDED.url THEN "transcriptIndex"."errorMessage" END, url = EXCLUDED.url
                RETURNING "episodeId", url
                """#, logger: self.logger
            )
            var claimed: [(episodeId: Int64, url: String)] = []
            for try await (id, url) in rows.decode((Int64, String).self) { claimed.append((id, url)) }
            return claimed
        }
    }

    package func indexTranscript(episodeId: Int64, url: String, cues: [TranscriptCue], now: Date) async throws {
        try await journal.write { connection in
            guard try await self.exists(.episode, id: episodeId, connection) else { return }
            try await connection.query(
                #"""
                INSERT INTO "transcriptIndex" ("episodeId", url, "claimedAt", "indexedAt", "cueCount") VALUES (\#(episodeId), \#(url), \#(now), \#(now), \#(cues.count))
                ON CONFLICT ("episodeId") DO UPDATE SET url = EXCLUDED.url, "claimedAt" = EXCLUDED."claimedAt", "indexedAt" = EXCLUDED."indexedAt",
                    "cueCount" = EXCLUDED."cueCount", "errorCode" = NULL, "errorMessage" = NULL, attempts = 0
                """#, logger: self.logger
            )
            try await connection.query(#"DELETE FROM "transcriptCue" WHERE "episodeId" = \#(episodeId)"#, logger: self.logger)
            // In batches, each one statement over arrays (no speaker is '').
            for start in stride(from: 0, to: cues.count, by: 2_000) {
                let batch = cues[start..<min(cues.count, start + 2_000)]
                try await connection.query(
                    #"""
                    INSERT INTO "transcriptCue" ("episodeId", "startSeconds", speaker, body, words)
                    SELECT \#(episodeId), s, NULLIF(p, ''), b, to_tsvector('simple', w)
                    FROM unnest(\#(batch.map(\.startSeconds))::float8[], \#(batch.map { $0.speaker ?? "" })::text[], \#(batch.map(\.text))::text[],
                        \#(batch.map { TranscriptQuery.words($0.text).joined(separator: " ") })::text[]) AS c(s, p, b, w)
                    """#, logger: self.logger
                )
            }
        }
    }

    package func transcriptFailed(episodeId: Int64, url: String, error: FerryError, now: Date) async throws {
        try await journal.write { connection in
            _ = try await connection.query(
                #"""
                UPDATE "transcriptIndex" SET "errorCode" = \#(error.code.rawValue), "errorMessage" = \#(error.message), attempts = attempts + 1, "claimedAt" = \#(now)
                WHERE "episodeId" = \#(episodeId) AND url = \#(url) AND "indexedAt" IS NULL
                """#, logger: self.logger
            )
        }
    }

    package func searchTranscripts(_ listener: String, _ query: TranscriptQuery, podcastId: Int64?, limit: Int) async throws -> [TranscriptLine] {
        try await journal.read { connection in
            let rows = try await connection.query(
                #"""
                SELECT found."episodeId", found."startSeconds", found.speaker, found.body FROM (
                    SELECT c.id, c."episodeId", c."startSeconds", c.speaker, c.body, c.words
                    FROM "transcriptCue" c WHERE c.words @@ to_tsquery('simple', \#(query.tsquery)) AND c."episodeId" IN (
                        SELECT e.id FROM episode e JOIN subscription s ON s."podcastId" = e."podcastId"
                        WHERE s.listener = \#(listener) AND (\#(podcastId)::bigint IS NULL OR e."podcastId" = \#(podcastId)))
                    ORDER BY c.id DESC LIMIT \#(TranscriptLine.mostRanked)
                ) found
                ORDER BY ts_rank(found.words, to_tsquery('simple', \#(query.tsquery))) DESC, found.id DESC LIMIT \#(limit)
                """#, logger: self.logger
            )
            var lines: [TranscriptLine] = []
            for try await (id, seconds, speaker, text) in rows.decode((Int64, Double, String?, String).self) {
                lines.append(TranscriptLine(episodeId: id, seconds: seconds, speaker: speaker, text: text))
            }
            return lines
        }
    }

    package func transcriptIndexStatus(_ listener: String) async throws -> TranscriptIndexStatus {
        try await journal.read { connection in
            let rows = try await connection.query(
                #"""
                SELECT COUNT(*), COUNT(t."indexedAt"), COUNT(t."errorCode") FILTER (WHERE t."indexedAt" IS NULL)
                FROM episode e JOIN subscription s ON s."podcastId" = e."podcastId" AND s.listener = \#(listener)
                LEFT JOIN "transcriptIndex" t ON t."episodeId" = e.id AND t.url = e.record->>'transcriptURL'
                WHERE e.record->>'transcriptURL' IS NOT NULL
                """#, logger: self.logger
            )
            for try await (all, indexed, failed) in rows.decode((Int, Int, Int).self) {
                return TranscriptIndexStatus(indexed: indexed, pending: all - indexed - failed, failed: failed)
            }
            return TranscriptIndexStatus(indexed: 0, pending: 0, failed: 0)
        }
    }
}
