import FerryKit
import FerryTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

@testable import FerryCore

/// Months of a user's downloads lived in seconds (issue 35's accelerated year, short form): the
/// engine's wall clock is moved a day at a time, and at each month's end the journal must be no
/// bigger than retention allows, however many transfers were done. `bench/run --only year` lives
/// a whole year with the real binary.
@Suite struct AcceleratedYearTests {
    /// The engine's and the journal's wall clock: the real time plus whole simulated days.
    final class SimulatedClock: Sendable {
        private let days = Atomic<Int>(0)
        func advance() { days.add(1, ordering: .relaxed) }
        var day: Int { days.load(ordering: .relaxed) }
        func now() -> Date { Date().addingTimeInterval(Double(day) * 86_400) }
    }

    /// What the journal holds at a month's end.
    struct Month: CustomStringConvertible {
        var transfersDone: Int
        var rows: [String: Int]
        var fileBytes: Int
        var walBytes: Int
        var descriptors: Int
        var threads: Int

        var description: String {
            "done \(transfersDone), journal \(fileBytes) B, WAL \(walBytes) B, fds \(descriptors), threads \(threads), rows \(rows.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
        }
    }

    static let perDay = 20
    static let daysPerMonth = 30
    static let months = 5
    /// Ages that bind before the counts do (20 a day), so the simulated clock is what prunes.
    static let history = RetentionLimit(days: 30, count: 1_000)
    static let window = RetentionLimit(days: 7, count: 2_000)
    /// A finished download's events while it is in the window: created, started, completed (and
    /// the `removed` of one that left the history); a paused one's paused and resumed.
    static let eventsPerTransfer = 4

    /// Each day: 20 downloads queued, 3 of them added paused (resumed the next day, or one
    /// cancelled), 2 finished ones removed with their files, the rest finish; the engine prunes
    /// once a simulated day (its hourly pass) and restarts on the same journal every 10 days.
    @Test(.timeLimit(.minutes(3))) func fiveMonthsStayWithinRetention() async throws {
        let clock = SimulatedClock()
        var configuration = TransferEngine.Configuration.fast
        configuration.historyRetention = Self.history
        configuration.eventRetention.window = Self.window
        configuration.eventPruneInterval = .seconds(86_400)
        configuration.now = { clock.now() }
        let file = Origin.File(data: Origin.bytes(2_048))
        try await withTemporaryDirectory { home in
            try await Origin.run { origin, base in
                var months: [Month] = []
                var done = 0
                var paused: [Int64] = []
                for _ in 0..<(Self.months * Self.daysPerMonth / 10) {
                    try await EngineHarness.run(home: home, configuration: configuration) { h in
                        for _ in 0..<10 {
                            done += try await Self.liveADay(h, origin: origin, base: base, file: file, day: clock.day, paused: &paused)
                            clock.advance()
                            await h.engine.pruneJournalNow()
                            if clock.day % Self.daysPerMonth == 0 {
                                months.append(try await Self.measure(h, home: home, done: done))
                            }
                        }
                    }
                }
                for (number, month) in months.enumerated() { print("simulated month \(number + 1): \(month)") }
                #expect(done >= Self.months * Self.daysPerMonth * (Self.perDay - 3))
                // What retention allows: the count, or the age's days of work if fewer, plus a
                // day's (and the day's paused ones, not finished).
                func bound(_ limit: RetentionLimit, perDay: Int) -> Int { min(limit.count, (Int(limit.age / 86_400) + 1) * perDay) + perDay + 3 }
                for month in months.dropFirst() {
                    #expect(month.rows["transfer", default: 0] <= bound(Self.history, perDay: Self.perDay), "\(month)")
                    #expect(month.rows["event", default: 0] <= bound(Self.window, perDay: Self.perDay * Self.eventsPerTransfer), "\(month)")
                }
                // Flat after the first months: no month's file more than 10% above the second's.
                let settled = months[1]
                for month in months.dropFirst(2) {
                    #expect(month.fileBytes <= settled.fileBytes + settled.fileBytes / 10 + 64 * 1024, "\(month) vs \(settled)")
                    #expect(month.walBytes <= SQLiteJournal.walSizeLimit, "\(month)")
                }
            }
        }
    }

    /// A transfer hidden while an episode named it (left by builds before the episode let go of
    /// it first) goes with the next prune of the history once nothing names it.
    @Test func aHiddenTransferNothingNamesGoesWithTheHistory() async throws {
        let journal = try SQLiteJournal.inMemory(tables: [.listening])
        let kept = try await journal.createTransfer(TransferRecord(session: "s", url: "http://127.0.0.1/kept", folder: ""), reuseExisting: false).record
        let orphan = try await journal.createTransfer(TransferRecord(session: "s", url: "http://127.0.0.1/orphan", folder: ""), reuseExisting: false).record
        try await journal.writer.write { db in
            try db.execute(sql: "UPDATE transfer SET state = 'completed', hidden = 1 WHERE id = ?", arguments: [orphan.transferId])
        }
        _ = try await journal.removeHistory(before: .distantPast, keepingNewest: 100, batch: 1000)
        let left = try await journal.writer.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM transfer") }
        #expect(left == [kept.transferId])
    }

    /// `FERRY_TEST_CLOCK_FILE`: the file's seconds added to the real time, read again when it changes.
    @Test func theTestClockFileMovesTheTimeAhead() async throws {
        try await withTemporaryDirectory { folder in
            let file = folder.appendingPathComponent("clock")
            let clock = try #require(TestClockFile(environment: [TestClockFile.variable: file.path]))
            #expect(TestClockFile(environment: [:]) == nil)
            #expect(abs(clock.now().timeIntervalSinceNow) < 5, "no file: the real time")
            try "86400\n".write(to: file, atomically: true, encoding: .utf8)
            #expect(abs(clock.now().timeIntervalSinceNow - 86_400) < 5)
            try "172800.5".write(to: file, atomically: true, encoding: .utf8)
            #expect(clock.offset() == 172_800.5)
        }
    }

    /// One simulated day's downloads; returns how many finished (completed or cancelled).
    static func liveADay(
        _ h: EngineHarness, origin: Origin, base: URL, file: Origin.File, day: Int, paused: inout [Int64]
    ) async throws -> Int {
        let urls = (0..<perDay).map { n in
            let path = "/d\(day)/\(n).bin"
            origin.serve(path, file)
            return base.appendingPathComponent(path)
        }
        // Yesterday's paused ones: one cancelled, the others resumed.
        for (n, id) in paused.enumerated() {
            if n == 0 { _ = try await h.engine.cancel(id) } else { _ = try await h.engine.resume(id) }
        }
        let resumed = Array(paused.dropFirst())
        let cancelled = paused.isEmpty ? 0 : 1
        let running = try await h.engine.enqueue(.init(urls: Array(urls.dropLast(3)), session: "test"))
        paused = try await h.engine.enqueue(.init(urls: Array(urls.suffix(3)), session: "test", paused: true)).map(\.id)
        for transfer in running { try await h.wait(transfer.id, for: .completed) }
        for id in resumed { try await h.wait(id, for: .completed) }
        for transfer in running.prefix(2) { try await h.engine.remove(transfer.id, deleteFile: true) }
        return running.count + resumed.count + cancelled
    }

    static func measure(_ h: EngineHarness, home: URL, done: Int) async throws -> Month {
        let rows = try await h.journal.writer.read { db in
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'grdb_%'")
            return try Dictionary(uniqueKeysWithValues: tables.map { ($0, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \"\($0)\"") ?? 0) })
        }
        let journal = home.appendingPathComponent("state/journal.sqlite").path
        func size(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0 }
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let threads = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }.flatMap { Int($0.dropFirst(8).trimmingCharacters(in: .whitespaces)) } ?? 0
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        return Month(transfersDone: done, rows: rows, fileBytes: size(journal), walBytes: size(journal + "-wal"), descriptors: descriptors, threads: threads)
    }
}
