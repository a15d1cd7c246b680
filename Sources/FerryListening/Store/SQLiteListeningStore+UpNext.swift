import FerryCore
import FerryKit
import Foundation
import GRDB

/// Each listener's Up Next (table `upNext`, one row per listener and place): replaced whole, in
/// one transaction, so two browsers never interleave their lists.
extension SQLiteListeningStore {
    /// The list in order. Entries whose episode or song is gone (an unsubscribed podcast) are left out.
    package func upNextEntries(_ listener: String) async throws -> [UpNextEntry] {
        try await writer.read { db in
            try Row.fetchAll(
                db, sql: """
                    SELECT u.media, u.mediaId FROM upNext u
                    WHERE u.listener = ? AND ((u.media = 'episode' AND EXISTS (SELECT 1 FROM episode e WHERE e.id = u.mediaId))
                       OR (u.media = 'track' AND EXISTS (SELECT 1 FROM track t WHERE t.trackId = u.mediaId)))
                    ORDER BY u.rank
                    """, arguments: [listener]
            ).compactMap { row in UpNextEntry.Kind(rawValue: row[0]).map { UpNextEntry(kind: $0, id: row[1]) } }
        }
    }

    /// Replaces the list; the same item twice keeps its first place.
    /// - Throws: `not_found` naming the first episode or song that does not exist (nothing changed);
    ///   `invalid_request` for more than ``UpNext/limit`` items.
    package func setUpNext(_ listener: String, _ entries: [UpNextEntry]) async throws {
        let unique = try UpNext.validated(entries)
        try await writer.write { db in
            for entry in unique {
                let media = PlaybackMedia(rawValue: entry.kind.rawValue) ?? .episode
                guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(media.table) WHERE \(media.key) = ?)", arguments: [entry.id]) == true else {
                    throw UpNext.missing(entry)
                }
            }
            try db.execute(sql: "DELETE FROM upNext WHERE listener = ?", arguments: [listener])
            for (rank, entry) in unique.enumerated() {
                try db.execute(
                    sql: "INSERT INTO upNext (listener, rank, media, mediaId) VALUES (?, ?, ?, ?)", arguments: [listener, rank, entry.kind.rawValue, entry.id]
                )
            }
        }
    }
}
