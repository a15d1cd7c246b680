#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// The real `ferry serve` killed with SIGKILL while a download runs over eight connections,
/// several times: after each kill every range resumes from its own durable end (nothing durable
/// is asked for again), at most a checkpoint's worth of each range is lost, and the file ends
/// with the right SHA-256.
@Suite(.serialized) struct SegmentedCrashTests {
    static let rate = 500_000
    /// A checkpoint every 2 s (the daemon's default) plus a connection's write lag (250 ms).
    static let checkpointLag = 2.5

    @Test func killNineWithEightRangesInFlight() async throws {
        let file = Origin.File(data: Origin.bytes(40_000_000, seed: 11), bytesPerSecond: Self.rate)
        try await Origin.run { origin, base in
            origin.serve("/big.bin", file)
            try await CommandRunner.withHome { home in
                let url = base.appendingPathComponent("big.bin").absoluteString
                let queued = try await CommandRunner.ferry(["get", "--no-wait", "--json", "-x", "8", url], home: home)
                #expect(queued.status == 0, "\(queued)")
                let id = try FerryJSON.decoder().decode([Transfer].self, from: Data(queued.stdout.utf8))[0].id
                for round in 1...3 {
                    let live = try await Self.eightRangesPastACheckpoint(id, home: home)
                    let victim = try #require(CommandRunner.daemonInfo(home: home))
                    #expect(kill(victim.pid, SIGKILL) == 0)
                    try await eventually("the daemon to die") { !ChildProcess.isAlive(victim.pid) }

                    let durable = try await Self.journaledRanges(id, home: home)
                    let written = live.reduce(0) { $0 + $1.bytes }
                    let kept = durable.reduce(0) { $0 + ($1.durable - $1.start) }
                    let allowance = Int64(Double(live.count * Self.rate) * Self.checkpointLag)
                    #expect(written - kept <= allowance, "round \(round): \(written - kept) bytes lost of \(written), allowed \(allowance)")

                    // The next command starts a daemon, which resumes each range.
                    let asked = origin.requests(for: "/big.bin").count
                    let list = try await CommandRunner.ferry(["ls", "--json"], home: home)
                    #expect(list.status == 0, "\(list)")
                    try await eventually("requests from the new daemon", timeout: .seconds(30)) {
                        origin.requests(for: "/big.bin").count > asked + 2
                    }
                    let starts = origin.requests(for: "/big.bin").dropFirst(asked).compactMap { $0.range.flatMap(Origin.rangeStart) }
                    for start in starts {
                        #expect(!durable.contains { Int($0.start) <= start && start < Int($0.durable) }, "round \(round): \(start) was durable")
                    }
                }
                origin.update("/big.bin") { $0.bytesPerSecond = nil }
                let wait = try await CommandRunner.ferry(["wait", "--json", String(id)], home: home)
                #expect(wait.status == 0, "\(wait)")
                let done = try FerryJSON.decoder().decode([Transfer].self, from: Data(wait.stdout.utf8))[0]
                #expect(done.sha256 == file.sha256)
                let onDisk = try Data(contentsOf: URL(fileURLWithPath: try #require(done.path)))
                #expect(onDisk.sha256Hex == file.sha256)
            }
        }
    }

    /// Waits until eight ranges are moving and a checkpoint has passed since; returns the live
    /// ranges read last.
    static func eightRangesPastACheckpoint(_ id: Int64, home: URL) async throws -> [TransferRange] {
        try await eventually("eight ranges moving", timeout: .seconds(60)) {
            let transfer = try await Self.transfer(id, home: home)
            return transfer.state == .running && (transfer.connections ?? 0) >= 8
        }
        try await Task.sleep(for: .seconds(3))
        return try await Self.transfer(id, home: home).ranges ?? []
    }

    static func transfer(_ id: Int64, home: URL) async throws -> Transfer {
        let shown = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
        return try #require(try FerryJSON.decoder().decode([Transfer].self, from: Data(shown.stdout.utf8)).first { $0.id == id })
    }

    /// The ranges as the journal has them (the daemon is dead: nothing writes it).
    static func journaledRanges(_ id: Int64, home: URL) async throws -> [(start: Int64, durable: Int64, end: Int64)] {
        let journal = try SQLiteJournal.open(at: home.appendingPathComponent("state/journal.sqlite"))
        let text = try #require(try await journal.transfer(id: id)?.segments, "the ranges are journaled")
        return try #require(SegmentPlan.ranges(journalText: text))
    }
}
