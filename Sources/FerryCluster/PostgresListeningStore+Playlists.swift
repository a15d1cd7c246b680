import FerryCore
import FerryKit
import FerryListening
import Foundation
import PostgresNIO

/// Each listener's playlists (tables `playlist` and `"playlistItem"`), as in SQLite.
extension PostgresListeningStore {
    package func playlists(_ listener: String) async throws -> [PlaylistRecord] {
        try await journal.read { connection in
            let entries = try await self.playlistEntries(listener, playlist: nil, connection)
            var found: [PlaylistRecord] = []
            let rows = try await connection.query(
                #"SELECT id, name, "updatedAt" FROM playlist WHERE listener = \#(listener) ORDER BY name COLLATE "C", id"#, logger: self.logger
            )
            for try await (id, name, updatedAt) in rows.decode((Int64, String, Date).self) {
                found.append(PlaylistRecord(id: id, name: name, updatedAt: updatedAt, entries: entries[id, default: []]))
            }
            return found
        }
    }

    package func playlist(_ listener: String, id: Int64) async throws -> PlaylistRecord {
        try await journal.read { connection in try await self.playlist(listener, id: id, connection) }
    }

    package func createPlaylist(_ listener: String, name: String, entries: [UpNextEntry], now: Date) async throws -> PlaylistRecord {
        let unique = try Playlist.validated(entries)
        return try await journal.write { connection in
            try await self.checkFree(listener, name: name, except: nil, connection)
            try await self.checkExist(unique, connection)
            let id = try await self.journal.one(
                Int64.self,
                #"INSERT INTO playlist (listener, name, "createdAt", "updatedAt") VALUES (\#(listener), \#(name), \#(now), \#(now)) RETURNING id"#,
                connection
            )
            try await self.insert(playlist: id, unique, from: 0, connection)
            return try await self.playlist(listener, id: id, connection)
        }
    }

    package func renamePlaylist(_ listener: String, id: Int64, name: String, now: Date) async throws {
        try await journal.write { connection in
            try await self.checkFree(listener, name: name, except: id, connection)
            let renamed = try await connection.query(
                #"UPDATE playlist SET name = \#(name), "updatedAt" = \#(now) WHERE id = \#(id) AND listener = \#(listener) RETURNING id"#,
                logger: self.logger
            )
            for try await _ in renamed { return }
            throw Playlist.missing(id)
        }
    }

    package func deletePlaylist(_ listener: String, id: Int64) async throws {
        try await journal.write { connection in
            // Its items go with it (ON DELETE CASCADE).
            let gone = try await connection.query(#"DELETE FROM playlist WHERE id = \#(id) AND listener = \#(listener) RETURNING id"#, logger: self.logger)
            for try await _ in gone { return }
            throw Playlist.missing(id)
        }
    }

    package func setPlaylistEntries(_ listener: String, id: Int64, _ entries: [UpNextEntry], now: Date) async throws {
        let unique = try Playlist.validated(entries)
        try await journal.write { connection in
            try await self.touch(listener, id: id, now: now, connection)
            try await self.checkExist(unique, connection)
            try await connection.query(#"DELETE FROM "playlistItem" WHERE "playlistId" = \#(id)"#, logger: self.logger)
            try await self.insert(playlist: id, unique, from: 0, connection)
        }
    }

    package func moveEntry(_ listener: String, _ entry: UpNextEntry, from: PlaylistPlace?, to: PlaylistPlace, now: Date) async throws {
        guard from != to else { throw Playlist.sameList(to) }
        try await journal.write { connection in
            try await self.checkExist([entry], connection)
            if let from {
                let owner = try await self.list(listener, from, now: now, connection)
                var query = PostgresQuery(unsafeSQL: "DELETE FROM \(owner.table) WHERE \(owner.column) = $1 AND media = $2 AND \"mediaId\" = $3 RETURNING rank")
                owner.bind(&query.binds)
                query.binds.append(entry.kind.rawValue)
                query.binds.append(entry.id)
                var removed = false
                for try await _ in try await connection.query(query, logger: self.logger) { removed = true }
                guard removed else { throw Playlist.notIn(entry, from) }
            }
            let owner = try await self.list(listener, to, now: now, connection)
            var present = PostgresQuery(unsafeSQL: "SELECT EXISTS (SELECT 1 FROM \(owner.table) WHERE \(owner.column) = $1 AND media = $2 AND \"mediaId\" = $3)")
            owner.bind(&present.binds)
            present.binds.append(entry.kind.rawValue)
            present.binds.append(entry.id)
            guard try await self.journal.one(Bool.self, present, connection) == false else { return }
            var size = PostgresQuery(unsafeSQL: "SELECT COUNT(*), MAX(rank) FROM \(owner.table) WHERE \(owner.column) = $1")
            owner.bind(&size.binds)
            var (count, last): (Int64, Int64?) = (0, nil)
            for try await row in try await connection.query(size, logger: self.logger).decode((Int64, Int64?).self) { (count, last) = row }
            guard count < Playlist.limit else { throw Playlist.full(to) }
            var insert = PostgresQuery(unsafeSQL: "INSERT INTO \(owner.table) (\(owner.column), rank, media, \"mediaId\") VALUES ($1, $2, $3, $4)")
            owner.bind(&insert.binds)
            insert.binds.append((last ?? -1) + 1)
            insert.binds.append(entry.kind.rawValue)
            insert.binds.append(entry.id)
            try await connection.query(insert, logger: self.logger)
        }
    }

    // MARK: Rows

    /// Where a place's items are: Up Next's rows of the listener, or a playlist's (checked to be
    /// the listener's, and marked changed).
    private struct ListRows {
        var table: String
        var column: String
        var listener: String?
        var playlist: Int64?

        func bind(_ binds: inout PostgresBindings) {
            if let playlist { binds.append(playlist) } else { binds.append(listener ?? "") }
        }
    }

    private func list(_ listener: String, _ place: PlaylistPlace, now: Date, _ connection: PostgresConnection) async throws -> ListRows {
        switch place {
        case .upNext:
            // Taken first, as `setUpNext` takes it: a list saved at once is one after the other.
            try await connection.query(#"LOCK TABLE "upNext" IN EXCLUSIVE MODE"#, logger: logger)
            return ListRows(table: #""upNext""#, column: "listener", listener: listener)
        case .playlist(let id):
            try await touch(listener, id: id, now: now, connection)
            return ListRows(table: #""playlistItem""#, column: #""playlistId""#, playlist: id)
        }
    }

    /// Marks the playlist changed, and locks its row until the transaction ends.
    private func touch(_ listener: String, id: Int64, now: Date, _ connection: PostgresConnection) async throws {
        let touched = try await connection.query(
            #"UPDATE playlist SET "updatedAt" = \#(now) WHERE id = \#(id) AND listener = \#(listener) RETURNING id"#, logger: logger
        )
        for try await _ in touched { return }
        throw Playlist.missing(id)
    }

    private func checkFree(_ listener: String, name: String, except id: Int64?, _ connection: PostgresConnection) async throws {
        // Two names given at once are one after the other.
        try await connection.query("LOCK TABLE playlist IN SHARE ROW EXCLUSIVE MODE", logger: logger)
        let taken = try await journal.one(
            Bool.self,
            #"SELECT EXISTS (SELECT 1 FROM playlist WHERE listener = \#(listener) AND name = \#(name) AND id IS DISTINCT FROM \#(id))"#,
            connection
        )
        if taken { throw Playlist.taken(name) }
    }

    private func checkExist(_ entries: [UpNextEntry], _ connection: PostgresConnection) async throws {
        for entry in entries {
            let media = PlaybackMedia(rawValue: entry.kind.rawValue) ?? .episode
            guard try await exists(media, id: entry.id, connection) else { throw UpNext.missing(entry) }
        }
    }

    private func insert(playlist id: Int64, _ entries: [UpNextEntry], from rank: Int, _ connection: PostgresConnection) async throws {
        guard !entries.isEmpty else { return }
        var binds = PostgresBindings(capacity: entries.count * 2 + 1)
        binds.append(id)
        for entry in entries {
            binds.append(entry.kind.rawValue)
            binds.append(entry.id)
        }
        let values = entries.indices.map { "($1, \(rank + $0), $\($0 * 2 + 2), $\($0 * 2 + 3))" }.joined(separator: ", ")
        try await connection.query(
            PostgresQuery(unsafeSQL: #"INSERT INTO "playlistItem" ("playlistId", rank, media, "mediaId") VALUES "# + values, binds: binds), logger: logger
        )
    }

    private func playlist(_ listener: String, id: Int64, _ connection: PostgresConnection) async throws -> PlaylistRecord {
        let rows = try await connection.query(#"SELECT name, "updatedAt" FROM playlist WHERE id = \#(id) AND listener = \#(listener)"#, logger: logger)
        for try await (name, updatedAt) in rows.decode((String, Date).self) {
            return PlaylistRecord(
                id: id, name: name, updatedAt: updatedAt, entries: try await playlistEntries(listener, playlist: id, connection)[id, default: []]
            )
        }
        throw Playlist.missing(id)
    }

    /// The items of one playlist or (nil) all the listener's, by playlist, in order; those whose
    /// episode or song is gone are left out.
    private func playlistEntries(_ listener: String, playlist: Int64?, _ connection: PostgresConnection) async throws -> [Int64: [UpNextEntry]] {
        let rows = try await connection.query(
            #"""
            SELECT i."playlistId", i.media, i."mediaId" FROM "playlistItem" i JOIN playlist p ON p.id = i."playlistId"
            WHERE p.listener = \#(listener) AND (\#(playlist)::BIGINT IS NULL OR p.id = \#(playlist))
              AND ((i.media = 'episode' AND EXISTS (SELECT 1 FROM episode e WHERE e.id = i."mediaId"))
                OR (i.media = 'track' AND EXISTS (SELECT 1 FROM track t WHERE t."trackId" = i."mediaId")))
            ORDER BY i."playlistId", i.rank
            """#, logger: logger
        )
        var found: [Int64: [UpNextEntry]] = [:]
        for try await (playlist, kind, id) in rows.decode((Int64, String, Int64).self) {
            if let kind = UpNextEntry.Kind(rawValue: kind) { found[playlist, default: []].append(UpNextEntry(kind: kind, id: id)) }
        }
        return found
    }
}
