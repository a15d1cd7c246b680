import FerryCore
import FerryKit
import FerryListening
import Foundation
import PostgresNIO

/// Each listener's bookmarks (table `bookmark`), as in SQLite.
extension PostgresListeningStore {
    package func addBookmark(_ listener: String, _ media: PlaybackMedia, id: Int64, seconds: Double, note: String?, now: Date) async throws -> BookmarkRecord {
        try await journal.write { connection in
            guard try await self.exists(media, id: id, connection) else { throw FerryError(.notFound, "There is no \(media.noun) \(id).") }
            let new = try await self.journal.one(
                Int64.self,
                #"""
                INSERT INTO bookmark (listener, media, "mediaId", seconds, note, "createdAt")
                VALUES (\#(listener), \#(media.rawValue), \#(id), \#(seconds), \#(note), \#(now)) RETURNING id
                """#, connection
            )
            return BookmarkRecord(id: new, media: media, mediaId: id, seconds: seconds, note: note, createdAt: now)
        }
    }

    package func bookmarks(_ listener: String, _ media: PlaybackMedia?, id: Int64?) async throws -> [BookmarkRecord] {
        try await journal.read { connection in
            if let media, let id {
                return try await self.bookmarks(
                    #"""
                    SELECT id, media, "mediaId", seconds, note, "createdAt" FROM bookmark
                    WHERE listener = \#(listener) AND media = \#(media.rawValue) AND "mediaId" = \#(id) ORDER BY seconds, id
                    """#, connection
                )
            }
            return try await self.bookmarks(
                #"SELECT id, media, "mediaId", seconds, note, "createdAt" FROM bookmark WHERE listener = \#(listener) ORDER BY media, "mediaId", seconds, id"#,
                connection
            )
        }
    }

    package func updateBookmark(_ listener: String, id: Int64, note: String?) async throws -> BookmarkRecord {
        try await journal.write { connection in
            let found = try await self.bookmarks(
                #"""
                UPDATE bookmark SET note = \#(note) WHERE id = \#(id) AND listener = \#(listener)
                RETURNING id, media, "mediaId", seconds, note, "createdAt"
                """#, connection
            )
            guard let record = found.first else { throw FerryError(.notFound, "There is no bookmark \(id) of yours.") }
            return record
        }
    }

    package func deleteBookmark(_ listener: String, id: Int64) async throws {
        try await journal.write { connection in
            let gone = try await self.bookmarks(
                #"DELETE FROM bookmark WHERE id = \#(id) AND listener = \#(listener) RETURNING id, media, "mediaId", seconds, note, "createdAt""#,
                connection
            )
            guard !gone.isEmpty else { throw FerryError(.notFound, "There is no bookmark \(id) of yours.") }
        }
    }

    private func bookmarks(_ query: PostgresQuery, _ connection: PostgresConnection) async throws -> [BookmarkRecord] {
        var found: [BookmarkRecord] = []
        for try await (id, media, mediaId, seconds, note, createdAt) in try await connection.query(query, logger: logger)
            .decode((Int64, String, Int64, Double, String?, Date).self)
        {
            guard let media = PlaybackMedia(rawValue: media) else { continue }
            found.append(BookmarkRecord(id: id, media: media, mediaId: mediaId, seconds: seconds, note: note, createdAt: createdAt))
        }
        return found
    }
}
