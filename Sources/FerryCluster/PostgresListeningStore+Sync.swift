import FerryCore
import FerryKit
import FerryListening
import Foundation
import PostgresNIO

/// The sync API's tables in PostgreSQL: any member answers a phone, and every member's web app
/// sees the positions it sends to its user. The log of each user's subscription changes is
/// written by a trigger on `subscription` (``PostgresSchema``), as SQLite's is.
extension PostgresListeningStore {
    // MARK: Users and devices

    package func syncDevices(user: String) async throws -> [(id: String, caption: String, type: String)] {
        try await journal.read { connection in
            let rows = try await connection.query(
                #"SELECT "deviceId", caption, type FROM "syncDevice" WHERE "user" = \#(user) ORDER BY "deviceId""#, logger: self.logger
            )
            var devices: [(id: String, caption: String, type: String)] = []
            for try await device in rows.decode((String, String, String).self) { devices.append(device) }
            return devices
        }
    }

    package func updateSyncDevice(user: String, id: String, caption: String?, type: String?, now: Date) async throws {
        try await journal.write { connection in
            try await self.ensureDevice(user: user, id: id, now: now, connection)
            try await connection.query(
                #"""
                UPDATE "syncDevice" SET caption = COALESCE(\#(caption), caption), type = COALESCE(\#(type), type)
                WHERE "user" = \#(user) AND "deviceId" = \#(id)
                """#, logger: self.logger
            )
        }
    }

    private func ensureDevice(user: String, id: String, now: Date, _ connection: PostgresConnection) async throws {
        try await connection.query(
            #"""
            INSERT INTO "syncDevice" ("user", "deviceId", caption, type, "updatedAt") VALUES (\#(user), \#(id), '', 'other', \#(now))
            ON CONFLICT DO NOTHING
            """#, logger: logger
        )
    }

    // MARK: Subscriptions

    package func syncSubscriptions(user: String) async throws -> [String] {
        try await strings(
            #"""
            SELECT p."feedURL" FROM subscription s JOIN podcast p ON p.id = s."podcastId" WHERE s.listener = \#(user)
            UNION SELECT url FROM "syncPending" WHERE listener = \#(user) ORDER BY 1
            """#
        )
    }

    package func syncSubscriptionChanges(user: String, since: Int64) async throws -> (add: [String], remove: [String]) {
        try await journal.read { connection in
            let rows = try await connection.query(
                #"""
                SELECT url, added FROM "syncSubscriptionChange" WHERE seq IN
                    (SELECT MAX(seq) FROM "syncSubscriptionChange" WHERE listener = \#(user) AND at >= \#(since) GROUP BY url)
                ORDER BY seq
                """#, logger: self.logger
            )
            var changes: (add: [String], remove: [String]) = ([], [])
            for try await (url, added) in rows.decode((String, Bool).self) {
                if added { changes.add.append(url) } else { changes.remove.append(url) }
            }
            return changes
        }
    }

    package func syncSubscriptionStates(user: String, since: Int64?) async throws -> [SyncSubscriptionState] {
        try await journal.read { connection in
            let rows = try await connection.query(
                #"""
                SELECT url, added, at, seq, deleted FROM "syncSubscriptionChange" WHERE seq IN
                    (SELECT MAX(seq) FROM "syncSubscriptionChange" WHERE listener = \#(user) AND at >= \#(since ?? Int64.min) GROUP BY url)
                ORDER BY seq
                """#, logger: self.logger
            )
            var states: [SyncSubscriptionState] = []
            for try await (url, added, at, seq, deleted) in rows.decode((String, Bool, Int64, Int64, Bool).self) {
                states.append(SyncSubscriptionState(url: url, subscribed: added, at: at, seq: seq, deleted: deleted))
            }
            return states
        }
    }

    package func markSyncDeletion(user: String, url: String) async throws -> Int64? {
        try await journal.write { connection in
            let rows = try await connection.query(
                #"""
                UPDATE "syncSubscriptionChange" SET deleted = TRUE WHERE NOT added AND seq =
                    (SELECT MAX(seq) FROM "syncSubscriptionChange" WHERE listener = \#(user) AND url = \#(url))
                RETURNING seq
                """#, logger: self.logger
            )
            for try await seq in rows.decode(Int64.self) { return seq }
            return nil
        }
    }

    package func syncDeletion(user: String, id: Int64) async throws -> SyncSubscriptionState? {
        try await journal.read { connection in
            let rows = try await connection.query(
                #"""
                SELECT url, added, at, seq, deleted FROM "syncSubscriptionChange" WHERE listener = \#(user) AND seq = \#(id) AND deleted
                """#, logger: self.logger
            )
            for try await (url, added, at, seq, deleted) in rows.decode((String, Bool, Int64, Int64, Bool).self) {
                return SyncSubscriptionState(url: url, subscribed: added, at: at, seq: seq, deleted: deleted)
            }
            return nil
        }
    }

    /// A phone's additions: a podcast the library has is the user's at once; another becomes
    /// pending. Its removals of pending ones are dropped.
    package func applySyncSubscriptions(user: String, device: String, add: [String], remove: [String], now: Date) async throws -> [Int64] {
        try await journal.write { connection in
            try await self.ensureDevice(user: user, id: device, now: now, connection)
            let at = Int64(now.timeIntervalSince1970)
            for url in add {
                var known: Int64?
                for try await id in try await connection.query(#"SELECT id FROM podcast WHERE "feedURL" = \#(url)"#, logger: self.logger)
                    .decode(Int64.self) { known = id }
                if let known {
                    try await self.subscribe(user, podcastId: known, now: now, connection)
                    continue
                }
                // The insert decides between two phones at once.
                let pending = try await connection.query(
                    #"""
                    INSERT INTO "syncPending" (listener, url, "addedAt") VALUES (\#(user), \#(url), \#(at)) ON CONFLICT DO NOTHING RETURNING url
                    """#, logger: self.logger
                )
                if try await self.isEmpty(pending) == false {
                    try await connection.query(
                        #"INSERT INTO "syncSubscriptionChange" (listener, url, added, at) VALUES (\#(user), \#(url), TRUE, \#(at))"#, logger: self.logger
                    )
                }
            }
            var unsubscribe: [Int64] = []
            for url in remove {
                let dropped = try await connection.query(
                    #"DELETE FROM "syncPending" WHERE listener = \#(user) AND url = \#(url) RETURNING url"#, logger: self.logger
                )
                if try await self.isEmpty(dropped) == false {
                    try await connection.query(
                        #"INSERT INTO "syncSubscriptionChange" (listener, url, added, at) VALUES (\#(user), \#(url), FALSE, \#(at))"#, logger: self.logger
                    )
                }
                let rows = try await connection.query(
                    #"""
                    SELECT p.id FROM podcast p JOIN subscription s ON s."podcastId" = p.id WHERE s.listener = \#(user) AND p."feedURL" = \#(url)
                    """#, logger: self.logger
                )
                for try await id in rows.decode(Int64.self) { unsubscribe.append(id) }
            }
            return unsubscribe
        }
    }

    package func syncPending() async throws -> [(user: String, url: String)] {
        try await journal.read { connection in
            var pending: [(user: String, url: String)] = []
            let rows = try await connection.query(#"SELECT listener, url FROM "syncPending" ORDER BY "addedAt", url"#, logger: self.logger)
            for try await row in rows.decode((String, String).self) { pending.append(row) }
            return pending
        }
    }

    package func resolvePending(user: String, _ url: String, error: String?) async throws {
        _ = try await journal.write { connection in
            if let error {
                try await connection.query(
                    #"UPDATE "syncPending" SET "errorMessage" = \#(error) WHERE listener = \#(user) AND url = \#(url)"#, logger: self.logger
                )
            } else {
                try await connection.query(#"DELETE FROM "syncPending" WHERE listener = \#(user) AND url = \#(url)"#, logger: self.logger)
            }
        }
    }

    // MARK: Episode actions

    package func storeEpisodeActions(_ actions: [EpisodeAction], user: String, now: Date) async throws {
        try await journal.write { connection in
            let at = Int64(now.timeIntervalSince1970)
            for action in actions {
                if let device = action.device { try await self.ensureDevice(user: user, id: device, now: now, connection) }
                try await self.insert(action, listener: user, at: at, connection)
                try await self.applyToPlayback(action, listener: user, now: now, connection)
            }
        }
    }

    package func episodeActions(user: String, since: Int64, podcast: String?, device: String?, aggregated: Bool) async throws -> [EpisodeAction] {
        // NULL filters match everything.
        let filter = #"""
            listener = $4 AND "receivedAt" >= $1 AND ($2::text IS NULL OR podcast = $2) AND ($3::text IS NULL OR device = $3)
            """#
        let columns = #"podcast, episode, guid, action, device, "timestamp", started, position, total"#
        let sql = aggregated
            ? #"SELECT \#(columns) FROM "syncEpisodeAction" WHERE seq IN (SELECT MAX(seq) FROM "syncEpisodeAction" WHERE \#(filter) GROUP BY podcast, episode) ORDER BY seq"#
            : #"SELECT \#(columns) FROM "syncEpisodeAction" WHERE \#(filter) ORDER BY seq"#
        var binds = PostgresBindings(capacity: 4)
        binds.append(since)
        binds.append(podcast)
        binds.append(device)
        binds.append(user)
        let query = PostgresQuery(unsafeSQL: sql, binds: binds)
        return try await journal.read { connection in
            let rows = try await connection.query(query, logger: self.logger)
            var actions: [EpisodeAction] = []
            for try await row in rows {
                let (podcast, episode, guid, kind, device, timestamp, started, position, total) =
                    try row.decode((String, String, String?, String, String?, Int64, Int64?, Int64?, Int64?).self)
                guard let kind = EpisodeAction.Kind(rawValue: kind) else { continue }
                actions.append(EpisodeAction(
                    podcast: podcast, episode: episode, guid: guid, action: kind, device: device, timestamp: timestamp,
                    started: started.map(Int.init), position: position.map(Int.init), total: total.map(Int.init)
                ))
            }
            return actions
        }
    }

    private func insert(_ action: EpisodeAction, listener: String, at: Int64, _ connection: PostgresConnection) async throws {
        try await connection.query(
            #"""
            INSERT INTO "syncEpisodeAction" (listener, podcast, episode, guid, device, action, "timestamp", started, position, total, "receivedAt")
            VALUES (\#(listener), \#(action.podcast), \#(action.episode), \#(action.guid), \#(action.device), \#(action.action.rawValue),
                    \#(action.timestamp ?? at), \#(action.started.map(Int64.init)), \#(action.position.map(Int64.init)),
                    \#(action.total.map(Int64.init)), \#(at))
            """#, logger: logger
        )
    }

    /// A phone's `play` or `new` moves the user's playback of the episodes it names (by media URL, or guid).
    private func applyToPlayback(_ action: EpisodeAction, listener: String, now: Date, _ connection: PostgresConnection) async throws {
        guard action.action == .play || action.action == .new else { return }
        var ids: [Int64] = []
        let rows = try await connection.query(
            #"""
            SELECT e.id FROM episode e JOIN podcast p ON p.id = e."podcastId"
            WHERE p."feedURL" = \#(action.podcast) AND (e.record->>'enclosureURL' = \#(action.episode) OR e.guid = \#(action.guid))
            """#, logger: logger
        )
        for try await id in rows.decode(Int64.self) { ids.append(id) }
        let current = try await playbacks(listener, .episode, ids: ids, connection, lock: true)
        for id in ids {
            guard let next = action.playback(after: current[id], now: now) else { continue }
            try await write(listener, .episode, id: id, next, connection)
        }
    }

    /// Reports the daemon's own change to the listener's phones, one per episode.
    func recordOwnAction(_ listener: String, episode id: Int64, from previous: Playback?, to next: Playback, duration: Double?, _ connection: PostgresConnection) async throws {
        let rows = try await connection.query(
            #"""
            SELECT p."feedURL", e.record->>'enclosureURL', e.record->>'guid', (e.record->>'duration')::double precision
            FROM episode e JOIN podcast p ON p.id = e."podcastId" WHERE e.id = \#(id)
            """#, logger: logger
        )
        var found: (feed: String, media: String?, guid: String?, duration: Double?)?
        for try await row in rows.decode((String, String?, String?, Double?).self) { found = row }
        // Rows are read to the end before the next statement on this connection.
        if let (feed, media, guid, stored) = found, let media {
            let total = (duration ?? stored).map { Int($0.rounded()) }
            let action = EpisodeAction.own(feed: feed, media: media, guid: guid, total: total, from: previous, to: next)
            try await connection.query(
                #"""
                DELETE FROM "syncEpisodeAction"
                WHERE listener = \#(listener) AND device = \#(EpisodeAction.ownDevice) AND podcast = \#(feed) AND episode = \#(media)
                """#, logger: logger
            )
            try await insert(action, listener: listener, at: action.timestamp ?? 0, connection)
        }
    }

    private func strings(_ query: PostgresQuery) async throws -> [String] {
        try await journal.read { connection in
            var values: [String] = []
            for try await value in try await connection.query(query, logger: self.logger).decode(String.self) { values.append(value) }
            return values
        }
    }
}
