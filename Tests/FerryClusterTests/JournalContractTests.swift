import FerryCluster
import FerryKit
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryCore

/// The journal's contract, run against both journals: SQLite (a file) and PostgreSQL (a
/// database of the test server's own; the PostgreSQL runs are left out, with
/// `PostgresServerTests` saying why, where PostgreSQL is not installed).
@Suite struct JournalContractTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqlite, postgres
        var testDescription: String { rawValue }

        static var available: [Kind] { PostgresServer.isAvailable ? allCases : [.sqlite] }
    }

    /// `body` with a fresh, empty journal of `kind`.
    static func withJournal(_ kind: Kind, _ body: (any TransferJournal) async throws -> Void) async throws {
        switch kind {
        case .sqlite:
            try await withTemporaryDirectory { folder in
                try await body(try SQLiteJournal.open(at: folder.appendingPathComponent("journal.sqlite")))
            }
        case .postgres:
            let journal = try await PostgresJournal.connect(to: try await MigratedDatabase.make())
            defer { journal.close() }
            try await body(journal)
        }
    }

    private func draft(_ url: String = "http://127.0.0.1/a", session: String = "s") -> TransferRecord {
        TransferRecord(session: session, url: url, folder: "Downloads")
    }

    /// Live listeners get every journaled event in `seq` order, however many writers race
    /// (an event stream skips numbers it has passed, so an overtaken event would be lost).
    /// One machine's journal says where it stands: every write of a transfer or an event moves
    /// its mark, with an event or without. A cluster's cannot say (its members commit at once).
    @Test(arguments: Kind.available) func theMarkMovesWithEveryWriteOfATransfer(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            guard kind == .sqlite else {
                #expect(try await journal.mark() == nil)
                return
            }
            var marks = [try #require(try await journal.mark())]
            let id = try await journal.createTransfers([draft()], reuseExisting: false)[0].record.transferId
            marks.append(try #require(try await journal.mark()))
            _ = try await journal.update(id: id) { (record: inout TransferRecord) -> (Void, TransferEvent?) in
                record.priority = 5
                return ((), nil)
            }
            marks.append(try #require(try await journal.mark()))
            _ = try await journal.append(TransferEvent(kind: .progress, transferId: id, session: "s"))
            marks.append(try #require(try await journal.mark()))
            _ = try await journal.removeTransfer(id: id)
            marks.append(try #require(try await journal.mark()))
            #expect(Set(marks.map(\.writes)).count == 5, "\(marks)")
            #expect(try await journal.mark() == marks[4], "nothing written since")
        }
    }

    @Test(arguments: Kind.available) func committedEventsArriveInSequenceOrder(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            let seen = Mutex<[Int64]>([])
            journal.onCommit { event in seen.withLock { $0.append(event.seq ?? -1) } }
            let (record, _) = try await journal.createTransfer(draft(), reuseExisting: false)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<16 {
                    group.addTask {
                        for n in 0..<25 {
                            if n % 2 == 0 {
                                _ = try await journal.append(TransferEvent(kind: .progress, transferId: record.transferId, session: "s"))
                            } else {
                                try await journal.update(id: record.transferId) { record in
                                    record.durableBytes = Int64(writer * 100 + n)
                                    return record.event(.progress)
                                }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            // PostgreSQL's listeners hear of commits a moment later.
            try await eventually("every event") { seen.withLock { $0.count } >= 1 + 16 * 25 }
            #expect(seen.withLock { $0 } == Array(1...Int64(1 + 16 * 25)))
        }
    }

    @Test(arguments: Kind.available) func createJournalsACreatedEventAndReusesTheSameURL(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            let (first, event) = try await journal.createTransfer(draft(), reuseExisting: true)
            #expect(first.transferId == 1)
            #expect(event?.kind == .created)
            #expect(event?.seq == 1)
            let (again, none) = try await journal.createTransfer(draft(), reuseExisting: true)
            #expect(again.transferId == first.transferId)
            #expect(none == nil)
            let (forced, _) = try await journal.createTransfer(draft(), reuseExisting: false)
            #expect(forced.transferId == 2)
            // A cancelled transfer does not count as "already asked for".
            for id: Int64 in [1, 2] {
                try await journal.update(id: id) { record in
                    record.state = .cancelled
                    return nil
                }
            }
            let (fresh, _) = try await journal.createTransfer(draft(), reuseExisting: true)
            #expect(fresh.transferId == 3)
            // Many at once: one transaction, ids in order.
            let many = try await journal.createTransfers((0..<50).map { draft("http://127.0.0.1/\($0)") }, reuseExisting: true)
            #expect(many.map(\.record.transferId) == Array(4...53))
            #expect(many.allSatisfy { $0.event?.kind == .created })
            let seqs = many.compactMap(\.event?.seq)
            #expect(seqs.count == 50 && seqs == seqs.sorted() && Set(seqs).count == 50)
            #expect(try await journal.events(session: "s", after: seqs[0] - 1).filter { $0.kind == .created }.map(\.transferId) == Array(4...53))
            // The same URL twice in one batch, and one already asked for: each is one transfer.
            let batch = try await journal.createTransfers(
                [draft("http://127.0.0.1/new"), draft("http://127.0.0.1/7"), draft("http://127.0.0.1/new"), draft("http://127.0.0.1/new", session: "t")],
                reuseExisting: true
            )
            #expect(batch.map(\.record.transferId) == [54, 11, 54, 55])
            #expect(batch.map { $0.event != nil } == [true, false, false, true])
            // 2,500 at once (more than one statement's worth of rows).
            let large = try await journal.createTransfers((0..<2500).map { draft("http://127.0.0.1/l\($0)") }, reuseExisting: true)
            #expect(large.map(\.record.transferId) == Array(56...2555))
            #expect(large.map(\.record.url) == (0..<2500).map { "http://127.0.0.1/l\($0)" })
        }
    }

    /// A session's cookie jar: empty at first, changed in one transaction, kept apart from its
    /// options, gone with the session.
    @Test(arguments: Kind.available) func eachSessionKeepsItsCookieJar(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            #expect(try await journal.cookies(session: "s").isEmpty)
            let cookie = Cookie(name: "sid", value: "v", domain: "example.com", expires: Date(timeIntervalSince1970: 2_000_000_000),
                                secure: true, sameSite: .lax, created: Date(timeIntervalSince1970: 1_800_000_000))
            #expect(try await journal.updateCookies(session: "s") { $0 + [cookie] } == [cookie])
            try await journal.updateSessionOptions("s") { _ in TransferOptions(maxRetries: 3) }
            #expect(try await journal.cookies(session: "s") == [cookie])
            #expect(try await journal.cookies(session: "other").isEmpty)
            #expect(try await journal.sessionOptions("s").maxRetries == 3)
            await #expect(throws: FerryError.self) {
                try await journal.updateCookies(session: "s") { _ in throw FerryError.invalidRequest("no") }
            }
            #expect(try await journal.cookies(session: "s") == [cookie], "a throwing change writes nothing")
            _ = try await journal.forgetSession("s")
            #expect(try await journal.cookies(session: "s").isEmpty)
        }
    }

    @Test(arguments: Kind.available) func aThrowingUpdateWritesNothing(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            let id = try await journal.createTransfer(draft(), reuseExisting: false).record.transferId
            await #expect(throws: FerryError.self) {
                try await journal.update(id: id) { record in
                    record.state = .paused
                    record.durableBytes = 99
                    throw FerryError.invalidState("no")
                }
            }
            let record = try await journal.transfer(id: id)
            #expect(record?.state == .queued)
            #expect(record?.durableBytes == 0)
            #expect(try await journal.events(session: "s", after: 0).count == 1)
            await #expect(throws: FerryError.self) { try await journal.update(id: 999) { _ in nil } }
            #expect(try await journal.transfer(id: 999) == nil)
        }
    }

    @Test(arguments: Kind.available) func eventsArePerSessionInOrderAndPrunedByAcknowledgement(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            let a = try await journal.createTransfer(draft(session: "a"), reuseExisting: false).record
            let b = try await journal.createTransfer(draft(session: "b"), reuseExisting: false).record
            for kind in [TransferEvent.Kind.started, .progress, .completed] {
                _ = try await journal.append(a.event(kind))
                _ = try await journal.append(b.event(kind))
            }
            let eventsA = try await journal.events(session: "a", after: 0)
            #expect(eventsA.map(\.kind) == [.created, .started, .progress, .completed])
            #expect(eventsA.allSatisfy { $0.session == "a" && $0.transferId == a.transferId })
            #expect(eventsA.map { $0.seq! } == [1, 3, 5, 7])
            #expect(try await journal.events(session: "a", after: 3).map { $0.seq! } == [5, 7])
            #expect(try await journal.events(session: nil, after: 6).map { $0.seq! } == [7, 8])

            try await journal.acknowledge(session: "a", through: 5)
            #expect(try await journal.acknowledgedSeq(session: "a") == 5)
            #expect(try await journal.events(session: "a", after: 0).map { $0.seq! } == [7])
            // Other sessions keep theirs; acknowledging never goes backwards.
            #expect(try await journal.events(session: "b", after: 0).count == 4)
            try await journal.acknowledge(session: "a", through: 2)
            #expect(try await journal.acknowledgedSeq(session: "a") == 5)
            // Sequence numbers are never reused after pruning.
            try await journal.acknowledge(session: "a", through: 8)
            try await journal.acknowledge(session: "b", through: 8)
            #expect(try await journal.lastEventSeq() == 8)
            let next = try await journal.append(a.event(.paused))
            #expect(next.seq == 9)
        }
    }

    /// Retention: a session that never acknowledges keeps a window (by count and by age); one
    /// that acknowledges keeps its unacknowledged events to a longer limit; forgetting a session
    /// takes its events, acknowledgement and options, and leaves the others alone.
    @Test(arguments: Kind.available) func eventsBeyondTheirSessionsRetentionGoAndAForgottenSessionLeavesNothing(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let day: TimeInterval = 86_400
            let cli = try await journal.createTransfer(draft("http://127.0.0.1/cli", session: "cli"), reuseExisting: false).record
            let app = try await journal.createTransfer(draft("http://127.0.0.1/app", session: "app"), reuseExisting: false).record
            // A program that opened its session (acknowledging through 0) and quit before any event.
            let quiet = try await journal.createTransfer(draft("http://127.0.0.1/quiet", session: "quiet"), reuseExisting: false).record
            try await journal.acknowledge(session: "quiet", through: 0)
            // Ten days of events, one a day, for each; the app acknowledged its first.
            for age in stride(from: 10.0, through: 1, by: -1) {
                for record in [cli, app, quiet] {
                    _ = try await journal.append(TransferEvent(kind: .progress, transferId: record.transferId, session: record.session, date: now - age * day))
                }
            }
            try await journal.acknowledge(session: "app", through: 2)
            try await journal.updateSessionOptions("app") { _ in TransferOptions(maxConcurrent: 2) }
            let before = try await journal.events(session: "app", after: 0).count

            // A week for the CLI: the 7 youngest of its progress events stay; the app keeps all it has not acknowledged.
            let retention = EventRetention(window: .init(days: 7.5, count: 100), unacknowledged: .init(days: 90, count: 100))
            #expect(try await journal.prunedSeq(session: nil) == 0)
            let oldest = try await journal.events(session: "cli", after: 0).prefix(4).compactMap(\.seq)
            let gone = try await journal.pruneEvents(retention, now: now)
            #expect(try await journal.prunedSeq(session: "cli") == oldest.last, "where the CLI's stream must resync from")
            #expect(try await journal.prunedSeq(session: "app") == 0)
            let cliLeft = try await journal.events(session: "cli", after: 0)
            #expect(cliLeft.count == 7 && cliLeft.allSatisfy { $0.date >= now - 7.5 * day }, "\(cliLeft.map(\.date))")
            #expect(try await journal.events(session: "app", after: 0).count == before)
            #expect(try await journal.events(session: "quiet", after: 0).count == 11, "it acknowledges: kept like the app's")
            #expect(gone == 11 - 7, "the CLI's created event and its three oldest")

            // By count: the newest three.
            _ = try await journal.pruneEvents(EventRetention(window: .init(days: 365, count: 3), unacknowledged: .init(days: 90, count: 100)), now: now)
            #expect(try await journal.events(session: "cli", after: 0).map(\.seq) == cliLeft.suffix(3).map(\.seq))
            // The acknowledging session's own limit, by count too.
            _ = try await journal.pruneEvents(EventRetention(window: .init(days: 365, count: 3), unacknowledged: .init(days: 90, count: 2)), now: now)
            #expect(try await journal.events(session: "app", after: 0).count == 2)
            // Sequence numbers stay: the next event's is past every one given.
            let last = try await journal.lastEventSeq()
            #expect(try await journal.append(TransferEvent(kind: .paused, transferId: cli.transferId, session: "cli")).seq == last + 1)

            #expect(try await journal.prunedSeq(session: nil) >= oldest.last!)
            #expect(try await journal.forgetSession("app") == 2)
            #expect(try await journal.events(session: "app", after: 0).isEmpty)
            #expect(try await journal.acknowledgedSeq(session: "app") == 0)
            #expect(try await journal.sessionOptions("app") == TransferOptions())
            #expect(try await journal.events(session: "cli", after: 0).count == 4, "other sessions keep theirs")
            #expect(try await journal.transfer(id: app.transferId) != nil, "its transfers stay")
        }
    }

    /// The history's retention: the oldest finished transfers go (by count, then by age), in
    /// batches, with a `removed` event each; unfinished ones stay whatever their age.
    @Test(arguments: Kind.available) func historyBeyondItsRetentionIsRemovedOldestFirst(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            for n in 1...8 { _ = try await journal.createTransfer(draft("http://127.0.0.1/h\(n)", session: "h"), reuseExisting: false) }
            for (id, state) in [(Int64(1), TransferState.completed), (2, .cancelled), (3, .completed), (4, .queued), (5, .completed), (6, .completed), (7, .failed)] {
                try await journal.update(id: id) { record in
                    record.state = state
                    return nil
                }
            }
            // (The journal dates each change itself: a cutoff in the future stands for a year later.)
            let long = Date(timeIntervalSince1970: 1_000_000)
            // Keep the newest four finished (1, 2, 3, 5, 6 are finished: 1 goes by count), in batches of one.
            let first = try await journal.removeHistory(before: long, keepingNewest: 4, batch: 1)
            #expect(first.map(\.transferId) == [1])
            #expect(try await journal.removeHistory(before: long, keepingNewest: 4, batch: 1).isEmpty)
            // By age: every finished one changed before the cutoff goes; queued and failed ones stay.
            let aged = try await journal.removeHistory(before: Date().addingTimeInterval(60), keepingNewest: 100, batch: 10)
            #expect(aged.map(\.transferId) == [2, 3, 5, 6])
            #expect(aged.first?.state == .cancelled, "the records as they were")
            #expect(try await journal.transfers().map(\.transferId) == [4, 7, 8])
            let removed = try await journal.events(session: "h", after: 0).filter { $0.kind == .removed }.map(\.transferId)
            #expect(removed == [1, 2, 3, 5, 6])
        }
    }

    /// Every column comes back as written (dates to the millisecond, as SQLite keeps them).
    @Test(arguments: Kind.available) func everyColumnRoundTrips(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            var full = TransferRecord(session: "s", url: "http://127.0.0.1/full", folder: "Music", suggestedName: "a", preferredName: "b", taskDescription: "c")
            let date = Date(timeIntervalSince1970: 1_764_000_000.123)
            full.nameHint = "d"; full.fileName = "e"; full.durableBytes = 1 << 40; full.totalBytes = 1 << 41; full.validator = "\"etag\""
            full.sha256 = "ab"; full.errorCode = "http"; full.errorMessage = "é ✓"; full.attempts = 3; full.failures = 2; full.retryAt = date
            full.keepsPartFile = true; full.createdAt = date; full.updatedAt = date; full.completedAt = date; full.kind = .upload
            full.method = "PUT"; full.sourcePath = "/tmp/x"; full.sourceIdentity = "1:2"; full.formField = "file"; full.uploadProtocol = .tus
            full.uploadURL = "http://127.0.0.1/u"; full.responseStatus = 201; full.responseHeaders = "{}"; full.responseBody = "ok"
            full.options = #"{"bytesPerSecond":5}"#; full.startAfter = date; full.waitReason = "network"; full.waitingSince = date
            full.waitsForNetwork = true; full.segments = "[]"; full.mirrors = "[]"; full.directory = "/srv"; full.outputName = "o"
            full.overwrite = true; full.checksum = "sha-256=ab"; full.serverDigest = "sha-256=:x:"; full.verifiedBy = "server"
            full.priority = -10; full.queueRank = -3; full.hidden = false; full.requestedBy = "alice"
            let id = try await journal.createTransfer(full, reuseExisting: false).record.transferId
            var back = try #require(try await journal.transfer(id: id))
            full.id = id
            // Dates as SQLite keeps them: to the millisecond.
            for path in [\TransferRecord.createdAt, \.updatedAt] { back[keyPath: path] = Self.milliseconds(back[keyPath: path]) }
            for path in [\TransferRecord.retryAt, \.completedAt, \.startAfter, \.waitingSince] { back[keyPath: path] = back[keyPath: path].map(Self.milliseconds) }
            #expect(back == full)
        }
    }

    static func milliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    @Test(arguments: Kind.available) func listsCountsAndRemovals(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            for n in 1...6 { _ = try await journal.createTransfer(draft("http://127.0.0.1/\(n)", session: n <= 3 ? "a" : "b"), reuseExisting: false) }
            for (id, state) in [(Int64(1), TransferState.completed), (2, .cancelled), (4, .completed), (5, .running)] {
                try await journal.update(id: id) { record in
                    record.state = state
                    return nil
                }
            }
            #expect(try await journal.transfers().map(\.transferId) == [1, 2, 3, 4, 5, 6])
            #expect(try await journal.transfers(session: "a").map(\.transferId) == [1, 2, 3])
            #expect(try await journal.transfers(states: [.queued, .running]).map(\.transferId) == [3, 5, 6])
            #expect(try await journal.transfers(limit: 2, after: 2).map(\.transferId) == [3, 4])
            #expect(try await journal.transfers(limit: 2, after: 5, newestFirst: true).map(\.transferId) == [4, 3])
            #expect(try await journal.counts() == [.completed: 2, .cancelled: 1, .queued: 2, .running: 1])

            #expect(try await journal.removeFinished(session: "a") == [1, 2])
            #expect(try await journal.transfers().map(\.transferId) == [3, 4, 5, 6])
            let removed = try await journal.removeTransfer(id: 6)
            #expect(removed.kind == .removed && removed.transferId == 6 && removed.session == "b")
            #expect(try await journal.removeFinished(session: nil) == [4])
            #expect(try await journal.transfers().map(\.transferId) == [3, 5])
            await #expect(throws: FerryError.self) { try await journal.removeTransfer(id: 6) }
            #expect(try await journal.events(session: "a", after: 0).filter { $0.kind == .removed }.map(\.transferId) == [1, 2])
            // A removed transfer's history went with it; only its `removed` event is left.
            let left = try await journal.events(session: nil, after: 0)
            for id: Int64 in [1, 2, 4, 6] { #expect(left.filter { $0.transferId == id }.map(\.kind) == [.removed]) }
            #expect(left.contains { $0.transferId == 3 && $0.kind != .removed }, "a transfer still listed keeps its events")
        }
    }

    @Test(arguments: Kind.available) func sessionAndDaemonOptions(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            #expect(try await journal.sessionOptions("s") == TransferOptions())
            #expect(try await journal.allSessionOptions().isEmpty)
            try await journal.updateSessionOptions("s") { _ in TransferOptions(maxConcurrent: 2, bytesPerSecond: 1000) }
            try await journal.updateDaemonOptions { _ in TransferOptions(maxConcurrent: 8) }
            #expect(try await journal.sessionOptions("s").bytesPerSecond == 1000)
            #expect(try await journal.daemonOptions().maxConcurrent == 8)
            let all = try await journal.allSessionOptions()
            #expect(Set(all.keys) == ["s", TransferJournalKeys.daemonOptions])
            // A refused change changes nothing; options back to none leave no row behind.
            await #expect(throws: FerryError.self) {
                try await journal.updateSessionOptions("s") { _ in throw FerryError.invalidRequest("no") }
            }
            #expect(try await journal.sessionOptions("s").maxConcurrent == 2)
            try await journal.updateSessionOptions("s") { _ in TransferOptions() }
            #expect(try await journal.allSessionOptions().keys.sorted() == [TransferJournalKeys.daemonOptions])
            // Options and acknowledgements share the session's row without undoing each other.
            try await journal.acknowledge(session: "t", through: 0)
            try await journal.updateSessionOptions("t") { _ in TransferOptions(maxRetries: 1) }
            #expect(try await journal.acknowledgedSeq(session: "t") == 0)
            #expect(try await journal.sessionOptions("t").maxRetries == 1)
        }
    }

    /// The credential store: one login per host, replaced by the next, removed once.
    @Test(arguments: Kind.available) func theCredentialStore(_ kind: Kind) async throws {
        try await Self.withJournal(kind) { journal in
            #expect(try await journal.storedCredentials().isEmpty)
            let added = Self.milliseconds(Date(timeIntervalSince1970: 1_800_000_000.25))
            try await journal.saveCredential(StoredCredential(host: "b.example", user: "ann", password: "one", addedAt: added))
            try await journal.saveCredential(StoredCredential(host: "a.example:8443", user: "bob", password: "p'w \"x\"", addedAt: added))
            try await journal.saveCredential(StoredCredential(host: "b.example", user: "ann2", password: "two", addedAt: added))
            let all = try await journal.storedCredentials()
            #expect(all.map(\.host) == ["a.example:8443", "b.example"])
            #expect(all.last?.user == "ann2" && all.last?.password == "two")
            #expect(all.first?.password == "p'w \"x\"")
            #expect(all.first.map { Self.milliseconds($0.addedAt) } == added)
            #expect(try await journal.removeCredential(host: "b.example"))
            #expect(try await !journal.removeCredential(host: "b.example"))
            #expect(try await journal.storedCredentials().map(\.host) == ["a.example:8443"])
        }
    }
}
