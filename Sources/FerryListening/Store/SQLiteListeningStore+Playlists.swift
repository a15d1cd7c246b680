import FerryCore
import FerryKit
import Foundation
import GRDB

/// Each listener's playlists (tables `playlist` and `playlistItem`, one row per place): items
/// are replaced whole or moved between lists in one transaction, as Up Next is.
extension SQLiteListeningStore {
    package func playlists(_ listener: String) async throws -> [PlaylistRecord] {
        try await writer.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, name, updatedAt FROM playlist WHERE listener = ? ORDER BY name, id", arguments: [listener])
            let entries = try Self.entries(db, listener: listener, playlist: nil)
            return rows.map { row in PlaylistRecord(id: row[0], name: row[1], updatedAt: row[2], entries: entries[row[0], default: []]) }
        }
    }

    package func playlist(_ listener: String, id: Int64) async throws -> PlaylistRecord {
        try await writer.read { db in try Self.playlist(db, listener, id: id) }
    }

    package func createPlaylist(_ listener: String, name: String, entries: [UpNextEntry], now: Date) async throws -> PlaylistRecord {
        let unique = try Playlist.validated(entries)
        return try await writer.write { db in
            try Self.checkFree(db, listener, name: name, except: nil)
            try Self.checkExist(db, unique)
            try db.execute(
                sql: "INSERT INTO playlist (listener, name, createdAt, updatedAt) VALUES (?, ?, ?, ?)",
                arguments: [listener, name, JournalDate(now), JournalDate(now)]
            )
            let id = db.lastInsertedRowID
            try Self.insert(db, playlist: id, unique, from: 0)
            return try Self.playlist(db, listener, id: id)
        }
    }

    package func renamePlaylist(_ listener: String, id: Int64, name: String, now: Date) async throws {
        try await writer.write { db in
            try Self.checkFree(db, listener, name: name, except: id)
            try db.execute(
                sql: "UPDATE playlist SET name = ?, updatedAt = ? WHERE id = ? AND listener = ?", arguments: [name, JournalDate(now), id, listener]
            )
            guard db.changesCount > 0 else { throw Playlist.missing(id) }
        }
    }

    package func deletePlaylist(_ listener: String, id: Int64) async throws {
        try await writer.write { db in
            try db.execute(sql: "DELETE FROM playlist WHERE id = ? AND listener = ?", arguments: [id, listener])
            guard db.changesCount > 0 else { throw Playlist.missing(id) }
            try db.execute(sql: "DELETE FROM playlistItem WHERE playlistId = ?", arguments: [id])
        }
    }

    package func setPlaylistEntries(_ listener: String, id: Int64, _ entries: [UpNextEntry], now: Date) async throws {
        let unique = try Playlist.validated(entries)
        try await writer.write { db in
            try Self.touch(db, listener, id: id, now: now)
            try Self.checkExist(db, unique)
            try db.execute(sql: "DELETE FROM playlistItem WHERE playlistId = ?", arguments: [id])
            try Self.insert(db, playlist: id, unique, from: 0)
        }
    }

    package func moveEntry(_ listener: String, _ entry: UpNextEntry, from: PlaylistPlace?, to: PlaylistPlace, now: Date) async throws {
        guard from != to else { throw Playlist.sameList(to) }
        try await writer.write { db in
            try Self.checkExist(db, [entry])
            if let from {
                let (table, owner) = try Self.list(db, listener, from, now: now)
                try db.execute(sql: "DELETE FROM \(table) WHERE \(owner.column) = ? AND media = ? AND mediaId = ?", arguments: [owner.value, entry.kind.rawValue, entry.id])
                guard db.changesCount > 0 else { throw Playlist.notIn(entry, from) }
            }
            let (table, owner) = try Self.list(db, listener, to, now: now)
            let key = "\(owner.column) = ? AND media = ? AND mediaId = ?"
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE \(key))", arguments: [owner.value, entry.kind.rawValue, entry.id]) == false
            else { return }
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), MAX(rank) FROM \(table) WHERE \(owner.column) = ?", arguments: [owner.value])
            let (count, last): (Int, Int64?) = (row?[0] ?? 0, row?[1])
            guard count < Playlist.limit else { throw Playlist.full(to) }
            try db.execute(
                sql: "INSERT INTO \(table) (\(owner.column), rank, media, mediaId) VALUES (?, ?, ?, ?)",
                arguments: [owner.value, (last ?? -1) + 1, entry.kind.rawValue, entry.id]
            )
        }
    }

    // MARK: Rows

    /// The table a place's items are in, and the column and value that pick its rows; a playlist
    /// is checked to be the listener's and marked changed.
    private static func list(_ db: Database, _ listener: String, _ place: PlaylistPlace, now: Date) throws -> (String, (column: String, value: DatabaseValue)) {
        switch place {
        case .upNext:
            return ("upNext", ("listener", listener.databaseValue))
        case .playlist(let id):
            try touch(db, listener, id: id, now: now)
            return ("playlistItem", ("playlistId", id.databaseValue))
        }
    }

    private static func touch(_ db: Database, _ listener: String, id: Int64, now: Date) throws {
        try db.execute(sql: "UPDATE playlist SET updatedAt = ? WHERE id = ? AND listener = ?", arguments: [JournalDate(now), id, listener])
        guard db.changesCount > 0 else { throw Playlist.missing(id) }
    }

    private static func checkFree(_ db: Database, _ listener: String, name: String, except id: Int64?) throws {
        let taken = try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM playlist WHERE listener = ? AND name = ? AND id IS NOT ?)", arguments: [listener, name, id]
        )
        if taken == true { throw Playlist.taken(name) }
    }

    private static func checkExist(_ db: Database, _ entries: [UpNextEntry]) throws {
        for entry in entries {
            let media = PlaybackMedia(rawValue: entry.kind.rawValue) ?? .episode
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(media.table) WHERE \(media.key) = ?)", arguments: [entry.id]) == true else {
                throw UpNext.missing(entry)
            }
        }
    }

    private static func insert(_ db: Database, playlist id: Int64, _ entries: [UpNextEntry], from rank: Int) throws {
        for (offset, entry) in entries.enumerated() {
            try db.execute(
                sql: "INSERT INTO playlistItem (playlistId, rank, media, mediaId) VALUES (?, ?, ?, ?)",
                arguments: [id, rank + offset, entry.kind.rawValue, entry.id]
            )
        }
    }

    private static func playlist(_ db: Database, _ listener: String, id: Int64) throws -> PlaylistRecord {
        guard let row = try Row.fetchOne(db, sql: "SELECT name, updatedAt FROM playlist WHERE id = ? AND listener = ?", arguments: [id, listener])
        else { throw Playlist.missing(id) }
        return PlaylistRecord(id: id, name: row[0], updatedAt: row[1], entries: try entries(db, listener: listener, playlist: id)[id, default: []])
    }

    /// The items of one playlist or (nil) all the listener's, by playlist, in order; those whose
    /// episode or song is gone are left out.
    private static func entries(_ db: Database, listener: String, playlist: Int64?) throws -> [Int64: [UpNextEntry]] {
        var sql = """
            SELECT i.playlistId, i.media, i.mediaId FROM playlistItem i JOIN playlist p ON p.id = i.playlistId
            WHERE p.listener = ? AND ((i.media = 'episode' AND EXISTS (SELECT 1 FROM episode e WHERE e.id = i.mediaId))
               OR (i.media = 'track' AND EXISTS (SELECT 1 FROM track t WHERE t.trackId = i.mediaId)))
            """
        var arguments: StatementArguments = [listener]
        if let playlist {
            sql += " AND p.id = ?"
            arguments += [playlist]
        }
        var found: [Int64: [UpNextEntry]] = [:]
        for row in try Row.fetchAll(db, sql: sql + " ORDER BY i.playlistId, i.rank", arguments: arguments) {
            guard let kind = UpNextEntry.Kind(rawValue: row[1]) else { continue }
            found[row[0], default: []].append(UpNextEntry(kind: kind, id: row[2]))
        }
        return found
    }
}
