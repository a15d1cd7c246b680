import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Bandwidth by the clock: windows read as people write them, what holds at a moment and until
/// when (past midnight and across the week), the control holding a paused session, and the real
/// engine starting and stopping a session's transfers as its windows open and close.
@Suite struct RateScheduleTests {
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// 2026-11-25 is a Wednesday.
    static func at(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        return formatter.date(from: text)!
    }

    @Test func windowsAreReadAsPeopleWriteThem() throws {
        let office = try RateSchedule.window(parsing: "Mon-Fri 09:00-18:00", bytesPerSecond: 2_000_000)
        #expect(office == .init(days: [1, 2, 3, 4, 5], start: 9 * 3600, end: 18 * 3600, bytesPerSecond: 2_000_000))
        #expect(try RateSchedule.window(parsing: "Sat,Sun 00:00-24:00", bytesPerSecond: nil).days == [6, 7])
        #expect(try RateSchedule.window(parsing: "Fri-Mon 22:00-06:00:30", bytesPerSecond: nil).days == [5, 6, 7, 1])
        #expect(try RateSchedule.window(parsing: "22:00-06:00", bytesPerSecond: nil).days.isEmpty)
        for bad in ["", "Mon-Fri", "Funday 09:00-18:00", "Mon 9-18", "Mon 25:00-26:00", "10:00-10:00", "Mon Tue 09:00-10:00", "Mon 09:60-10:00"] {
            #expect(throws: FerryError.self, "\(bad)") { try RateSchedule.window(parsing: bad, bytesPerSecond: nil) }
        }
    }

    @Test func whatHoldsAndUntilWhen() throws {
        let schedule = RateSchedule(windows: [try RateSchedule.window(parsing: "Mon-Fri 09:00-18:00", bytesPerSecond: 2_000_000)])
        let inside = schedule.state(at: Self.at("2026-11-25T10:00:00Z"), calendar: Self.utc)
        #expect(inside == .init(bytesPerSecond: 2_000_000, paused: false, until: Self.at("2026-11-25T18:00:00Z"), inWindow: true))
        let evening = schedule.state(at: Self.at("2026-11-25T18:00:00Z"), calendar: Self.utc)
        #expect(evening == .init(bytesPerSecond: nil, paused: false, until: Self.at("2026-11-26T09:00:00Z")))
        // Friday evening: the next window is Monday's.
        #expect(schedule.state(at: Self.at("2026-11-27T19:00:00Z"), calendar: Self.utc).until == Self.at("2026-11-30T09:00:00Z"))
    }

    /// A window past midnight belongs to the day it starts on; outside it, nothing runs.
    @Test func nightWindowsAndPausedOutside() throws {
        let nights = RateSchedule(windows: [try RateSchedule.window(parsing: "Sun 22:00-06:00", bytesPerSecond: nil)], outside: .paused)
        #expect(nights.state(at: Self.at("2026-11-29T23:00:00Z"), calendar: Self.utc).paused == false)  // Sunday night
        #expect(nights.state(at: Self.at("2026-11-30T05:59:59Z"), calendar: Self.utc).paused == false)  // Monday early
        let monday = nights.state(at: Self.at("2026-11-30T06:00:00Z"), calendar: Self.utc)
        #expect(monday.paused && monday.until == Self.at("2026-12-06T22:00:00Z"))
        #expect(nights.state(at: Self.at("2026-11-28T23:00:00Z"), calendar: Self.utc).paused, "Saturday night is not Sunday's")
        // Two windows at once: the tighter limit.
        let both = RateSchedule(windows: [
            .init(start: 0, end: 86_400, bytesPerSecond: 5_000_000), .init(start: 3600, end: 7200, bytesPerSecond: 1_000_000),
        ])
        #expect(both.state(at: Self.at("2026-11-25T01:30:00Z"), calendar: Self.utc).bytesPerSecond == 1_000_000)
    }

    @Test func thePausedSessionStopsAndWaits() throws {
        var control = TransferControl(limits: .init(daemon: 4))
        for id in 1...3 as ClosedRange<Int64> { control.load(id, .init(state: .queued, session: id == 3 ? "b" : "a")) }
        let started = try control.handle(.scheduleDue, now: Date())
        #expect(started.count == 3)
        let held = try control.handle(.limits(.init(daemon: 4, paused: ["a"])), now: Date())
        #expect(held == [.stopWorker(1), .stopWorker(2)])
        for id in [1, 2] as [Int64] {
            let ended = try control.handle(.workerEnded(id, worker: control.entry(id)!.worker!, .stopped), now: Date())
            #expect(!ended.contains { if case .startWorker = $0 { true } else { false } })
            #expect(control.entry(id)?.state == .queued)
        }
        let everything = try control.handle(.limits(.init(daemon: 4, paused: [TransferControl.Limits.everySession])), now: Date())
        #expect(everything == [.stopWorker(3)])
    }

    /// A limiter made for a schedule stays while its window has no limit, so a transfer started
    /// then slows down when the next window opens; a limit removed stops slowing those running.
    @Test func runningTransfersFollowTheLimit() async throws {
        let bandwidth = Bandwidth()
        var settings = TransferSettings()
        settings.session = TransferOptions(schedule: .init(windows: [.init(start: 0, end: 60, bytesPerSecond: 10_000)]))
        bandwidth.update(session: "s", bytesPerSecond: nil, scheduled: true)
        let pace = try #require(bandwidth.pace(for: 1, session: "s", settings))
        let free = ContinuousClock.now
        try await pace(1_000_000)
        #expect(free.duration(to: .now) < .milliseconds(100))
        bandwidth.update(session: "s", bytesPerSecond: 100_000, scheduled: true)
        // Each chunk waits for the one before it to be "spent": 50 kB at 100 kB/s is 0.5 s.
        let slow = ContinuousClock.now
        try await pace(50_000)
        try await pace(50_000)
        #expect(slow.duration(to: .now) >= .milliseconds(300))
        bandwidth.update(session: "s", bytesPerSecond: nil)
        let again = ContinuousClock.now
        try await pace(10_000_000)
        #expect(again.duration(to: .now) < .milliseconds(100))
    }

    /// The real engine: a session allowed to run only from 2 s to 5 s from now. Its download
    /// waits, starts when the window opens, and stops (back in the queue, its bytes kept) when
    /// it closes. (What is checked holds however slow the machine: a request made, at most one.)
    @Test func aWindowStartsAndStopsTheSessionsTransfers() async throws {
        let file = Origin.File(data: Origin.bytes(3_000_000), bytesPerSecond: 200_000)
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let now = Date()
                    let second = Int(now.timeIntervalSince(Calendar.current.startOfDay(for: now)))
                    let window = RateSchedule.Window(start: (second + 2) % 86_400, end: (second + 5) % 86_400)
                    _ = try await h.engine.updateOptions(
                        session: "night", .init(set: TransferOptions(schedule: .init(windows: [window], outside: .paused)))
                    )
                    let t = try await h.engine.enqueue(.init(urls: [base.appendingPathComponent("f")], session: "night", options: .init(connections: 1)))[0]
                    #expect(try await h.engine.transfer(t.id).state == .queued)
                    #expect(origin.requests(for: "/f").isEmpty, "held before the window")
                    try await eventually("the window to open", timeout: .seconds(10)) { !origin.requests(for: "/f").isEmpty }
                    #expect(Date().timeIntervalSince(now) >= 1, "not before the window")
                    try await eventually("the window to close", timeout: .seconds(10)) {
                        let transfer = try await h.engine.transfer(t.id)
                        return transfer.state == .queued && transfer.bytesReceived > 0
                    }
                    let stopped = try await h.engine.transfer(t.id).bytesReceived
                    try await Task.sleep(for: .seconds(1))
                    #expect(try await h.engine.transfer(t.id).bytesReceived == stopped, "nothing moves outside the window")
                    #expect(origin.requests(for: "/f").count == 1)
                }
            }
        }
    }
}
