import FerryCore
import FerryKit
import Foundation
import GRDB

/// The sync API's tables (journal v14, per user since v19): users' devices (the users are
/// accounts), the log of each user's subscription changes (`since` deltas; triggers on
/// `subscription` write it, so a subscription made in the web app reaches the phone too), URLs a
/// phone added that are not fetched yet, and episode actions. Times are whole seconds since 1970, as the API counts them.
extension SQLiteListeningStore {
    // MARK: Users and devices

    package func syncDevices(user: String) async throws -> [(id: String, caption: String, type: String)] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT deviceId, caption, type FROM syncDevice WHERE user = ? ORDER BY deviceId", arguments: [user])
                .map { ($0[0], $0[1], $0[2]) }
        }
    }

    /// Creates the device, or changes what is given of its caption and type.
    package func updateSyncDevice(user: String, id: String, caption: String?, type: String?, now: Date) async throws {
        try await writer.write { db in
            try Self.ensureDevice(db, user: user, id: id, now: now)
            if let caption { try db.execute(sql: "UPDATE syncDevice SET caption = ? WHERE user = ? AND deviceId = ?", arguments: [caption, user, id]) }
            if let type { try db.execute(sql: "UPDATE syncDevice SET type = ? WHERE user = ? AND deviceId = ?", arguments: [type, user, id]) }
        }
    }

    private static func ensureDevice(_ db: Database, user: String, id: String, now: Date) throws {
        try db.execute(
            sql: "INSERT INTO syncDevice (user, deviceId, caption, type, updatedAt) VALUES (?, ?, '', 'other', ?) ON CONFLICT DO NOTHING",
            arguments: [user, id, JournalDate(now)]
        )
    }

    // MARK: Subscriptions

    package func syncSubscriptions(user: String) async throws -> [String] {
        try await writer.read { db in
            try String.fetchAll(
                db, sql: """
                    SELECT p.feedURL FROM subscription s JOIN podcast p ON p.id = s.podcastId WHERE s.listener = ?
                    UNION SELECT url FROM syncPending WHERE listener = ? ORDER BY 1
                    """, arguments: [user, user]
            )
        }
    }

    package func syncSubscriptionChanges(user: String, since: Int64) async throws -> (add: [String], remove: [String]) {
        try await writer.read { db in
            let rows = try Row.fetchAll(
                db, sql: """
                    SELECT url, added FROM syncSubscriptionChange WHERE seq IN
                        (SELECT MAX(seq) FROM syncSubscriptionChange WHERE listener = ? AND at >= ? GROUP BY url)
                    ORDER BY seq
                    """, arguments: [user, since]
            )
            return (rows.filter { $0[1] as Bool }.map { $0[0] }, rows.filter { !($0[1] as Bool) }.map { $0[0] })
        }
    }

    package func syncSubscriptionStates(user: String, since: Int64?) async throws -> [SyncSubscriptionState] {
        try await writer.read { db in
            try Row.fetchAll(
                db, sql: """
                    SELECT url, added, at, seq, deleted FROM syncSubscriptionChange WHERE seq IN
                        (SELECT MAX(seq) FROM syncSubscriptionChange WHERE listener = ? AND at >= ? GROUP BY url)
                    ORDER BY seq
                    """, arguments: [user, since ?? Int64.min]
            ).map(Self.subscriptionState)
        }
    }

    /// A `url, added, at, seq, deleted` row of the subscription log.
    private static func subscriptionState(_ row: Row) -> SyncSubscriptionState {
        SyncSubscriptionState(url: row[0], subscribed: row[1], at: row[2], seq: row[3], deleted: row[4])
    }

    package func markSyncDeletion(user: String, url: String) async throws -> Int64? {
        try await writer.write { db in
            guard let seq = try Int64.fetchOne(
                db, sql: "SELECT MAX(seq) FROM syncSubscriptionChange WHERE listener = ? AND url = ?", arguments: [user, url]
            ) else { return nil }
            try db.execute(sql: "UPDATE syncSubscriptionChange SET deleted = 1 WHERE seq = ? AND NOT added", arguments: [seq])
            return db.changesCount > 0 ? seq : nil
        }
    }

    package func syncDeletion(user: String, id: Int64) async throws -> SyncSubscriptionState? {
        try await writer.read { db in
            try Row.fetchOne(
                db, sql: "SELECT url, added, at, seq, deleted FROM syncSubscriptionChange WHERE listener = ? AND seq = ? AND deleted",
                arguments: [user, id]
            ).map(Self.subscriptionState)
        }
    }

    /// A phone's additions: a podcast the library has is the user's at once; another becomes
    /// pending (fetched by ``SyncLibrary``). Its removals of pending ones are dropped. The device
    /// is created if new.
    /// - Returns: the removals that are the user's subscriptions, for the caller to unsubscribe.
    package func applySyncSubscriptions(user: String, device: String, add: [String], remove: [String], now: Date) async throws -> [Int64] {
        try await writer.write { db in
            try Self.ensureDevice(db, user: user, id: device, now: now)
            let at = Int64(now.timeIntervalSince1970)
            for url in add {
                if let podcastId = try Int64.fetchOne(db, sql: "SELECT id FROM podcast WHERE feedURL = ?", arguments: [url]) {
                    guard try !Subscription.exists(db, key: ["listener": user, "podcastId": podcastId]) else { continue }
                    try Subscription(listener: user, podcastId: podcastId, createdAt: now).insert(db)
                    try Self.updateUnion(podcastId, db)
                    continue
                }
                try db.execute(sql: "INSERT INTO syncPending (listener, url, addedAt) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", arguments: [user, url, at])
                if db.changesCount > 0 {
                    try db.execute(sql: "INSERT INTO syncSubscriptionChange (listener, url, added, at) VALUES (?, ?, 1, ?)", arguments: [user, url, at])
                }
            }
            var unsubscribe: [Int64] = []
            for url in remove {
                try db.execute(sql: "DELETE FROM syncPending WHERE listener = ? AND url = ?", arguments: [user, url])
                if db.changesCount > 0 {
                    try db.execute(sql: "INSERT INTO syncSubscriptionChange (listener, url, added, at) VALUES (?, ?, 0, ?)", arguments: [user, url, at])
                }
                unsubscribe += try Int64.fetchAll(
                    db, sql: "SELECT p.id FROM podcast p JOIN subscription s ON s.podcastId = p.id WHERE s.listener = ? AND p.feedURL = ?",
                    arguments: [user, url]
                )
            }
            return unsubscribe
        }
    }

    package func syncPending() async throws -> [(user: String, url: String)] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT listener, url FROM syncPending ORDER BY addedAt, url").map { ($0[0], $0[1]) }
        }
    }

    /// A pending URL is the user's subscription now (its trigger logs it), or failed with `error`.
    package func resolvePending(user: String, _ url: String, error: String?) async throws {
        try await writer.write { db in
            if let error {
                try db.execute(sql: "UPDATE syncPending SET errorMessage = ? WHERE listener = ? AND url = ?", arguments: [error, user, url])
            } else {
                try db.execute(sql: "DELETE FROM syncPending WHERE listener = ? AND url = ?", arguments: [user, url])
            }
        }
    }

    // MARK: Episode actions

    /// Stores a phone's actions in one transaction; each `play` with a position that is newer
    /// than what the daemon knows of the user moves their playback there (the web app resumes
    /// from it), `new` marks it unplayed.
    package func storeEpisodeActions(_ actions: [EpisodeAction], user: String, now: Date) async throws {
        try await writer.write { db in
            let at = Int64(now.timeIntervalSince1970)
            for action in actions {
                if let device = action.device { try Self.ensureDevice(db, user: user, id: device, now: now) }
                try Self.insert(action, listener: user, at: at, db)
                try Self.applyToPlayback(action, listener: user, now: now, db)
            }
        }
    }

    /// Actions received at or after `since`, oldest first; `aggregated`: only each episode's last.
    package func episodeActions(user: String, since: Int64, podcast: String?, device: String?, aggregated: Bool) async throws -> [EpisodeAction] {
        try await writer.read { db in
            var conditions = ["listener = ?", "receivedAt >= ?"]
            var arguments: StatementArguments = [user, since]
            if let podcast {
                conditions.append("podcast = ?")
                arguments += [podcast]
            }
            if let device {
                conditions.append("device = ?")
                arguments += [device]
            }
            let filter = conditions.joined(separator: " AND ")
            let sql = aggregated
                ? "SELECT * FROM syncEpisodeAction WHERE seq IN (SELECT MAX(seq) FROM syncEpisodeAction WHERE \(filter) GROUP BY podcast, episode) ORDER BY seq"
                : "SELECT * FROM syncEpisodeAction WHERE \(filter) ORDER BY seq"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).compactMap { row in
                EpisodeAction.Kind(rawValue: row["action"]).map { kind in
                    EpisodeAction(
                        podcast: row["podcast"], episode: row["episode"], guid: row["guid"], action: kind, device: row["device"],
                        timestamp: row["timestamp"], started: row["started"], position: row["position"], total: row["total"]
                    )
                }
            }
        }
    }

    private static func insert(_ action: EpisodeAction, listener: String, at: Int64, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO syncEpisodeAction (listener, podcast, episode, guid, device, action, timestamp, started, position, total, receivedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                listener, action.podcast, action.episode, action.guid, action.device, action.action.rawValue, action.timestamp ?? at,
                action.started, action.position, action.total, at,
            ]
        )
    }

    private static func applyToPlayback(_ action: EpisodeAction, listener: String, now: Date, _ db: Database) throws {
        let ids = try Int64.fetchAll(
            db, sql: """
                SELECT e.id FROM episode e JOIN podcast p ON p.id = e.podcastId
                WHERE p.feedURL = ? AND (e.enclosureURL = ? OR (? IS NOT NULL AND e.guid = ?))
                """,
            arguments: [action.podcast, action.episode, action.guid, action.guid]
        )
        for id in ids {
            guard let next = action.playback(after: try playback(listener, .episode, id: id, db), now: now) else { continue }
            try writePlayback(listener, .episode, id: id, next, db)
        }
    }

    /// Reports the daemon's own change to the listener's phones
    /// (``EpisodeAction/own(feed:media:guid:total:from:to:)``), one per episode.
    static func recordOwnAction(_ listener: String, episode id: Int64, from previous: Playback?, to next: Playback, duration: Double?, _ db: Database) throws {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT p.feedURL, e.enclosureURL, e.guid, e.duration FROM episode e JOIN podcast p ON p.id = e.podcastId WHERE e.id = ?",
            arguments: [id]
        ), let feed: String = row[0], let media: String = row[1] else { return }
        let total = (duration ?? row[3]).map { Int($0.rounded()) }
        let action = EpisodeAction.own(feed: feed, media: media, guid: row[2], total: total, from: previous, to: next)
        try db.execute(
            sql: "DELETE FROM syncEpisodeAction WHERE listener = ? AND device = ? AND podcast = ? AND episode = ?",
            arguments: [listener, EpisodeAction.ownDevice, feed, media]
        )
        try insert(action, listener: listener, at: action.timestamp ?? 0, db)
    }
}
