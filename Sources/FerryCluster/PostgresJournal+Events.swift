import FerryCore
import FerryKit
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Events: one global sequence, committed in order, each read by every member.
extension PostgresJournal {
    package func append(_ event: TransferEvent) async throws -> TransferEvent {
        try await write { connection in try await self.insert(event, connection) }
    }

    package func events(session: String?, after seq: Int64, limit: Int) async throws -> [TransferEvent] {
        try await read { connection in
            let rows = try await connection.query(
                #"SELECT seq, payload FROM event WHERE (\#(session)::text IS NULL OR "session" = \#(session)) AND seq > \#(seq) ORDER BY seq LIMIT \#(Int64(limit))"#,
                logger: self.logger
            )
            var events: [TransferEvent] = []
            for try await (seq, payload) in rows.decode((Int64, String).self) {
                var event = try Self.decoder.decode(TransferEvent.self, from: Data(payload.utf8))
                event.seq = seq
                events.append(event)
            }
            return events
        }
    }

    package func lastEventSeq() async throws -> Int64 {
        try await read { connection in
            try await self.one(Int64.self, "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM event_seq_seq", connection)
        }
    }

    /// None: a cluster's members commit at once, and no counter read by one of them orders its
    /// reads with the others' commits (a sequence is bumped before its commit; one row counted
    /// by all would make every write wait for every other, and deadlock some).
    package func mark() async throws -> JournalMark? { nil }

    package func acknowledgedSeq(session: String) async throws -> Int64 {
        try await read { connection in
            for try await seq in try await connection.query(#"SELECT "acknowledgedSeq" FROM session WHERE name = \#(session)"#, logger: self.logger).decode(Int64.self) {
                return seq
            }
            return 0
        }
    }

    package func acknowledge(session: String, through seq: Int64) async throws {
        try await write { connection in
            try await connection.query(
                #"""
                INSERT INTO session (name, "acknowledgedSeq", acknowledges) VALUES (\#(session), \#(seq), true)
                ON CONFLICT (name) DO UPDATE SET "acknowledgedSeq" = GREATEST(session."acknowledgedSeq", excluded."acknowledgedSeq"), acknowledges = true
                """#,
                logger: self.logger
            )
            try await connection.query(#"DELETE FROM event WHERE "session" = \#(session) AND seq <= \#(seq)"#, logger: self.logger)
        }
    }

    package func pruneEvents(_ retention: EventRetention, now: Date) async throws -> Int {
        try await write { connection in
            var sessions: [(String, Bool)] = []
            let rows = try await connection.query(
                #"""
                SELECT e."session", COALESCE(s.acknowledges, false)
                FROM (SELECT DISTINCT "session" FROM event) e LEFT JOIN session s ON s.name = e."session"
                """#,
                logger: self.logger
            )
            for try await row in rows.decode((String, Bool).self) { sessions.append(row) }
            var deleted = 0
            for (name, acknowledges) in sessions {
                let cut = retention.cut(acknowledges: acknowledges, now: now)
                var beyond: Int64 = 0
                let keep = cut.keepNewest
                for try await seq in try await connection.query(
                    #"SELECT seq FROM event WHERE "session" = \#(name) ORDER BY seq DESC LIMIT 1 OFFSET \#(keep)"#, logger: self.logger
                ).decode(Int64.self) { beyond = seq }
                let before = cut.before
                for try await (count, newest) in try await connection.query(
                    #"""
                    WITH gone AS (DELETE FROM event WHERE "session" = \#(name) AND (seq <= \#(beyond) OR "createdAt" < \#(before)) RETURNING seq)
                    SELECT count(*), COALESCE(MAX(seq), 0) FROM gone
                    """#,
                    logger: self.logger
                ).decode((Int64, Int64).self) where count > 0 {
                    deleted += Int(count)
                    try await connection.query(
                        #"""
                        INSERT INTO session (name, "prunedSeq") VALUES (\#(name), \#(newest))
                        ON CONFLICT (name) DO UPDATE SET "prunedSeq" = GREATEST(session."prunedSeq", excluded."prunedSeq")
                        """#,
                        logger: self.logger
                    )
                }
            }
            return deleted
        }
    }

    package func prunedSeq(session: String?) async throws -> Int64 {
        try await read { connection in
            let rows = try await connection.query(
                #"SELECT COALESCE(MAX("prunedSeq"), 0) FROM session WHERE \#(session)::text IS NULL OR name = \#(session)"#, logger: self.logger
            )
            for try await seq in rows.decode(Int64.self) { return seq }
            return 0
        }
    }

    package func compact() async throws {
        try await write { connection in
            try await connection.query("ANALYZE transfer", logger: self.logger)
            try await connection.query("ANALYZE event", logger: self.logger)
        }
    }

    package func forgetSession(_ session: String) async throws -> Int {
        try await write { connection in
            var deleted = 0
            for try await count in try await connection.query(
                #"WITH gone AS (DELETE FROM event WHERE "session" = \#(session) RETURNING 1) SELECT count(*) FROM gone"#, logger: self.logger
            ).decode(Int64.self) { deleted = Int(count) }
            try await connection.query("DELETE FROM session WHERE name = \(session)", logger: self.logger)
            return deleted
        }
    }

    /// Journals `events` in the caller's transaction → them with their `seq`, in order. One
    /// statement takes the events lock (held to the commit: sequence numbers commit in order),
    /// queues the NOTIFY (sent at the commit) and inserts: the lock is taken as late as it can
    /// be, and held for two round trips, so members' transactions wait on each other as little
    /// as they can.
    func insert(_ events: [TransferEvent], _ connection: PostgresConnection) async throws -> [TransferEvent] {
        guard !events.isEmpty else { return [] }
        var stored = events.map { event -> TransferEvent in
            var event = event
            event.seq = nil
            return event
        }
        let payloads = try stored.map { String(decoding: try Self.encoder.encode($0), as: UTF8.self) }
        let rows = try await connection.query(
            #"""
            WITH locked AS (SELECT pg_advisory_xact_lock(\#(PostgresSchema.Lock.events.rawValue))),
                 notified AS (SELECT pg_notify(\#(Self.channel), ''))
            INSERT INTO event ("session", "transferId", kind, payload, "createdAt")
            SELECT e.* FROM locked, notified,
                unnest(\#(stored.map(\.session))::text[], \#(stored.map(\.transferId))::bigint[], \#(stored.map(\.kind.rawValue))::text[],
                       \#(payloads)::text[], \#(stored.map(\.date))::timestamptz[]) AS e
            RETURNING seq
            """#,
            logger: logger
        )
        var seqs: [Int64] = []
        for try await seq in rows.decode(Int64.self) { seqs.append(seq) }
        // The sequence numbers the rows got, in the order they went in.
        for (index, seq) in seqs.sorted().enumerated() { stored[index].seq = seq }
        return stored
    }

    func insert(_ event: TransferEvent, _ connection: PostgresConnection) async throws -> TransferEvent {
        try await insert([event], connection)[0]
    }
}
