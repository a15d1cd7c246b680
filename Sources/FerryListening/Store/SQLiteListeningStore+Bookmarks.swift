import FerryCore
import FerryKit
import Foundation
import GRDB

/// Each listener's bookmarks (table `bookmark`).
extension SQLiteListeningStore {
    package func addBookmark(_ listener: String, _ media: PlaybackMedia, id: Int64, seconds: Double, note: String?, now: Date) async throws -> BookmarkRecord {
        try await writer.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(media.table) WHERE \(media.key) = ?)", arguments: [id]) == true else {
                throw FerryError(.notFound, "There is no \(media.noun) \(id).")
            }
            try db.execute(
                sql: "INSERT INTO bookmark (listener, media, mediaId, seconds, note, createdAt) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [listener, media.rawValue, id, seconds, note, JournalDate(now)]
            )
            return BookmarkRecord(id: db.lastInsertedRowID, media: media, mediaId: id, seconds: seconds, note: note, createdAt: now)
        }
    }

    package func bookmarks(_ listener: String, _ media: PlaybackMedia?, id: Int64?) async throws -> [BookmarkRecord] {
        try await writer.read { db in
            var sql = "SELECT id, media, mediaId, seconds, note, createdAt FROM bookmark WHERE listener = ?"
            var arguments: StatementArguments = [listener]
            if let media, let id {
                sql += " AND media = ? AND mediaId = ?"
                arguments += [media.rawValue, id]
            }
            return try Self.bookmarks(db, sql: sql + " ORDER BY media, mediaId, seconds, id", arguments: arguments)
        }
    }

    package func updateBookmark(_ listener: String, id: Int64, note: String?) async throws -> BookmarkRecord {
        try await writer.write { db in
            try db.execute(sql: "UPDATE bookmark SET note = ? WHERE id = ? AND listener = ?", arguments: [note, id, listener])
            guard db.changesCount > 0,
                let record = try Self.bookmarks(db, sql: "SELECT id, media, mediaId, seconds, note, createdAt FROM bookmark WHERE id = ?", arguments: [id]).first
            else { throw Self.noBookmark(id) }
            return record
        }
    }

    package func deleteBookmark(_ listener: String, id: Int64) async throws {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM bookmark WHERE id = ? AND listener = ?", arguments: [id, listener])
            guard db.changesCount > 0 else { throw Self.noBookmark(id) }
        }
    }

    static func noBookmark(_ id: Int64) -> FerryError { FerryError(.notFound, "There is no bookmark \(id) of yours.") }

    private static func bookmarks(_ db: Database, sql: String, arguments: StatementArguments) throws -> [BookmarkRecord] {
        try Row.fetchAll(db, sql: sql, arguments: arguments).compactMap { row in
            guard let media = PlaybackMedia(rawValue: row[1]) else { return nil }
            return BookmarkRecord(id: row[0], media: media, mediaId: row[2], seconds: row[3], note: row[4], createdAt: row[5])
        }
    }
}
