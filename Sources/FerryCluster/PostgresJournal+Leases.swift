import FerryCore
import FerryKit
import Foundation
import PostgresNIO

/// Members and leases: the cluster's queue. A member claims queued transfers with
/// `FOR UPDATE SKIP LOCKED` (no two members wait on, or take, the same row), each claim
/// raising the transfer's fencing number; it renews its leases while it works. A lease that
/// expires (its member died or was cut off) lets another member claim the transfer, with a
/// higher fence: the old member's later writes carry the old fence and are refused. Expiry is
/// the database's clock, so members' clocks do not matter.
extension PostgresJournal {
    /// A daemon working on the shared queue.
    package struct Member: Sendable, Hashable, Codable {
        package var id: String
        /// Where its API answers (for `ferry cluster status`).
        package var address: String?
        package var startedAt: Date
        package var heartbeatAt: Date

        package init(id: String, address: String?, startedAt: Date = Date(), heartbeatAt: Date = Date()) {
            self.id = id
            self.address = address
            self.startedAt = startedAt
            self.heartbeatAt = heartbeatAt
        }
    }

    /// A member's hold on a transfer: valid while the transfer's fence is still `fence`.
    package struct Lease: Sendable, Hashable {
        package var transferId: Int64
        package var member: String
        package var fence: Int64
        /// As the database's clock had it when granted or renewed.
        package var expires: Date
    }

    /// Records that `member` is alive (now, by the database's clock).
    /// - Returns: how many members beat within `window`, this one included.
    @discardableResult
    package func heartbeat(_ member: Member, aliveWithin window: Duration = .seconds(10)) async throws -> Int {
        try await read { connection in
            try await connection.query(
            #"""
            INSERT INTO member (id, address, "startedAt", "heartbeatAt") VALUES (\#(member.id), \#(member.address), \#(member.startedAt), now())
            ON CONFLICT (id) DO UPDATE SET address = excluded.address, "startedAt" = excluded."startedAt", "heartbeatAt" = now()
            """#,
                logger: self.logger
            )
            let alive = try await self.one(
                Int64.self, #"SELECT COUNT(*) FROM member WHERE "heartbeatAt" >= now() - make_interval(secs => \#(window.seconds))"#, connection
            )
            return Int(alive)
        }
    }

    /// Every member that ever beat, newest heartbeat first, each with whether it beat within
    /// `window` (by the database's clock).
    package func members(aliveWithin window: Duration) async throws -> [(member: Member, alive: Bool)] {
        try await read { connection in
            var members: [(member: Member, alive: Bool)] = []
            let rows = try await connection.query(
                #"""
                SELECT id, address, "startedAt", "heartbeatAt", "heartbeatAt" >= now() - make_interval(secs => \#(window.seconds))
                FROM member ORDER BY "heartbeatAt" DESC, id
                """#,
                logger: self.logger
            )
            for try await (id, address, started, beat, alive) in rows.decode((String, String?, Date, Date, Bool).self) {
                members.append((Member(id: id, address: address, startedAt: started, heartbeatAt: beat), alive))
            }
            return members
        }
    }

    /// Claims up to `limit` transfers for `member`, in queue order (priority, then rank): queued
    /// ones nobody holds, and queued, running or waiting ones whose lease lapsed (their member
    /// is gone). A session in `limits` gets only as many as leave it at most that many running
    /// and queued across the cluster; one in `paused` gets none; `excluding` are not taken. Each
    /// claim raises the transfer's fence. Claims take turns (a transaction lock; a member finding
    /// another claiming gets nothing this time), so limits hold; rows a command is changing at
    /// that moment are skipped, not waited for.
    package func claim(
        for member: String, limit: Int, lease: Duration, limits: [String: Int] = [:], paused: Set<String> = [], excluding: Set<Int64> = []
    ) async throws -> [(record: TransferRecord, lease: Lease)] {
        guard limit > 0 else { return [] }
        let names = limits.keys.sorted()
        let caps = names.map { Int64(limits[$0]!) }
        let claimable = #"""
            NOT hidden AND state IN ('queued', 'running', 'waiting') AND ("owner" IS NULL OR "leaseExpires" < now())
            AND ("startAfter" IS NULL OR state <> 'queued' OR "startAfter" <= now())
            """#
        let claimed = try await write { connection -> [(record: TransferRecord, lease: Lease)] in
            // Another member is claiming: this one tries again at its next turn rather than wait.
            guard try await self.one(Bool.self, "SELECT pg_try_advisory_xact_lock(\(PostgresSchema.Lock.claims.rawValue))", connection) else { return [] }
            let rows = try await connection.query(
                #"""
                WITH busy AS (
                    SELECT "session", COUNT(*) AS n FROM transfer
                    WHERE "owner" IS NOT NULL AND "leaseExpires" >= now() AND state IN ('queued', 'running') AND "session" = ANY(\#(names)::text[])
                    GROUP BY "session"
                ), room AS (
                    SELECT c.id FROM (
                        SELECT t.id, t."session", row_number() OVER (PARTITION BY t."session" ORDER BY t.priority DESC, COALESCE(t."queueRank", t.id), t.id) AS k
                        FROM transfer t WHERE \#(unescaped: claimable) AND t."session" = ANY(\#(names)::text[])
                    ) c
                    JOIN unnest(\#(names)::text[], \#(caps)::bigint[]) AS l(name, cap) ON l.name = c."session"
                    LEFT JOIN busy b ON b."session" = c."session"
                    WHERE c.k <= l.cap - COALESCE(b.n, 0)
                ), chosen AS (
                    SELECT id FROM transfer
                    WHERE \#(unescaped: claimable)
                      AND NOT ("session" = ANY(\#(paused.sorted())::text[])) AND NOT (id = ANY(\#(excluding.sorted())::bigint[]))
                      AND (NOT ("session" = ANY(\#(names)::text[])) OR id IN (SELECT id FROM room))
                    ORDER BY priority DESC, COALESCE("queueRank", id), id
                    LIMIT \#(Int64(limit))
                    FOR UPDATE SKIP LOCKED
                )
                UPDATE transfer SET "owner" = \#(member), "leaseExpires" = now() + make_interval(secs => \#(lease.seconds)), fence = fence + 1
                FROM chosen WHERE transfer.id = chosen.id
                RETURNING transfer.id, fence, "leaseExpires"
                """#,
                logger: self.logger
            )
            var granted: [Int64: Lease] = [:]
            for try await (id, fence, expires) in rows.decode((Int64, Int64, Date).self) {
                granted[id] = Lease(transferId: id, member: member, fence: fence, expires: expires)
            }
            guard !granted.isEmpty else { return [] }
            var binds = PostgresBindings()
            binds.append(Array(granted.keys))
            let records = try await connection.query(
                PostgresQuery(
                    unsafeSQL: TransferRecord.postgresSelect + #" WHERE id = ANY($1) ORDER BY priority DESC, COALESCE("queueRank", id), id"#, binds: binds
                ),
                logger: self.logger
            )
            var claimed: [(record: TransferRecord, lease: Lease)] = []
            for try await row in records {
                let record = try TransferRecord(postgres: row)
                claimed.append((record, granted[record.transferId]!))
            }
            return claimed
        }
        held.withLock { held in for (_, lease) in claimed { held[lease.transferId] = lease } }
        return claimed
    }

    /// Extends the leases still held (the same member and fence) by `lease` from now.
    /// - Returns: those renewed; a lease missing from them was lost.
    package func renew(_ leases: [Lease], lease: Duration) async throws -> [Lease] {
        guard !leases.isEmpty else { return [] }
        let seconds = lease.seconds
        var renewed: [Lease] = []
        for (member, held) in Dictionary(grouping: leases, by: \.member) {
            // A renewal that takes longer than a lease is no use: given up and made again on
            // another connection (one cut off with its member's link hangs until TCP gives up).
            renewed += try await write(stuck: lease) { connection in
                var renewed: [Lease] = []
                let rows = try await connection.query(
                #"""
                UPDATE transfer SET "leaseExpires" = now() + make_interval(secs => \#(seconds))
                WHERE (id, fence) IN (SELECT * FROM unnest(\#(held.map(\.transferId))::bigint[], \#(held.map(\.fence))::bigint[]))
                  AND "owner" = \#(member) AND "leaseExpires" >= now()
                RETURNING id, fence, "leaseExpires"
                """#,
                    logger: self.logger
                )
                for try await (id, fence, expires) in rows.decode((Int64, Int64, Date).self) {
                    renewed.append(Lease(transferId: id, member: member, fence: fence, expires: expires))
                }
                return renewed
            }
        }
        held.withLock { held in for lease in renewed where held[lease.transferId]?.fence == lease.fence { held[lease.transferId] = lease } }
        return renewed.sorted { $0.transferId < $1.transferId }
    }

    /// Gives a transfer back to the queue (a member stopping, or done with it); nothing when
    /// the lease was lost already.
    package func release(_ lease: Lease) async throws {
        try await write { connection in
            _ = try await connection.query(
                #"UPDATE transfer SET "owner" = NULL, "leaseExpires" = NULL WHERE id = \#(lease.transferId) AND fence = \#(lease.fence)"#,
                logger: self.logger
            )
        }
        held.withLock { held in if held[lease.transferId]?.fence == lease.fence { held[lease.transferId] = nil } }
    }

    /// Gives back every transfer `member` holds, with their fences raised: at a member's start
    /// (what its name held before a crash goes back at once, not when the leases lapse), and
    /// at its stop.
    package func releaseAll(of member: String) async throws {
        try await write { connection in
            _ = try await connection.query(
                #"UPDATE transfer SET "owner" = NULL, "leaseExpires" = NULL, fence = fence + 1 WHERE "owner" = \#(member)"#, logger: self.logger
            )
        }
        held.withLock { held in held = held.filter { $0.value.member != member } }
    }

    /// The transfers each member holds (leases not lapsed), by member.
    package func holdings() async throws -> [String: [Int64]] {
        try await read { connection in
            var holdings: [String: [Int64]] = [:]
            let rows = try await connection.query(
                #"SELECT "owner", id FROM transfer WHERE "owner" IS NOT NULL AND "leaseExpires" >= now() ORDER BY id"#, logger: self.logger
            )
            for try await (member, id) in rows.decode((String, Int64).self) { holdings[member, default: []].append(id) }
            return holdings
        }
    }

    /// ``update(id:_:)`` under a lease: refused with `lease_lost`, nothing written, when
    /// another member has claimed the transfer since (its fence moved on).
    package func update<Result: Sendable>(
        id: Int64, under lease: Lease, _ body: @escaping @Sendable (inout TransferRecord) throws -> (Result, TransferEvent?)
    ) async throws -> (record: TransferRecord, result: Result, event: TransferEvent?) {
        try await update(id: id, fence: lease.fence, body)
    }
}

extension Duration {
    /// In seconds, for PostgreSQL's intervals.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
