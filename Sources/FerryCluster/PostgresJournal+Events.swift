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
                INSERT INTO session (name, "acknowledgedSeq") VALUES (\#(session), \#(seq))
                ON CONFLICT (name) DO UPDATE SET "acknowledgedSeq" = GREATEST(session."acknowledgedSeq", excluded."acknowledgedSeq")
                """#,
                logger: self.logger
            )
            try await connection.query(#"DELETE FROM event WHERE "session" = \#(session) AND seq <= \#(seq)"#, logger: self.logger)
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
