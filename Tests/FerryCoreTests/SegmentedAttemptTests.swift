import FerryKit
import Foundation
import Testing

@testable import FerryCore

/// The ranges of one attempt without I/O: each input the coordinator and the connections give
/// (a tick, a connection's end with each kind of error, bytes, a take) and what the machine
/// decides.
@Suite struct SegmentedAttemptTests {
    typealias Attempt = SegmentedAttempt
    typealias Action = SegmentedAttempt.Action

    static let split: Int64 = 1 << 20
    static let a = URL(string: "http://a.test/f.iso")!
    static let b = URL(string: "http://b.test/f.iso")!

    static func attempt(total: Int64 = 64 << 20, mode: ConnectionTuner.Mode = .fixed(4), mirrors: [URL] = []) -> Attempt {
        var settings = Attempt.Settings(mode: mode)
        settings.minimumSplit = split
        return Attempt(
            plan: SegmentPlan(total: total, minimumSplit: split), sources: DownloadSources(reference: a, mirrors: mirrors, own: a),
            settings: settings
        )
    }

    static func ms(_ value: Int) -> Duration { .milliseconds(value) }
    static func status(_ code: Int) -> HTTPStatusFailure { HTTPStatusFailure(status: code, reason: "R", url: a, retryAfter: nil) }

    /// Fetches `bytes` on `connection`'s range and writes them.
    static func fetch(_ attempt: inout Attempt, _ connection: Int, _ assignment: SegmentPlan.Assignment, bytes: Int64, at now: Duration) {
        let (taken, _) = attempt.received(bytes, on: connection, for: assignment, at: now)
        _ = attempt.wrote(assignment.segment, through: assignment.from + taken)
    }

    @Test func theFirstConnectionGoesToTheReferenceAndIsNotCountedAgain() {
        var attempt = Self.attempt()
        #expect(attempt.begin() == [.open(connection: 0, source: 0, counted: false)])
        #expect(attempt.alive == [0])
    }

    @Test func aTickOpensTheConnectionsWantedWhereTheHostsAdmitThem() {
        var attempt = Self.attempt(mirrors: [Self.b])
        _ = attempt.begin()
        #expect(attempt.take(for: 0, first: true, at: .zero) != nil)
        // Each new one goes to the source with the fewest.
        #expect(attempt.tick(at: Self.ms(25)) { _ in true } == [
            .open(connection: 1, source: 1, counted: true), .open(connection: 2, source: 0, counted: true),
            .open(connection: 3, source: 1, counted: true),
        ])
        #expect(attempt.tick(at: Self.ms(50)) { _ in true } == [])

        var full = Self.attempt(mirrors: [Self.b])
        _ = full.begin()
        _ = full.take(for: 0, first: true, at: .zero)
        #expect(full.tick(at: Self.ms(25)) { _ in false } == [])
        // A host at its cap: the others take them.
        #expect(full.tick(at: Self.ms(50)) { $0 == "b.test" } == [
            .open(connection: 1, source: 1, counted: true), .open(connection: 2, source: 1, counted: true),
            .open(connection: 3, source: 1, counted: true),
        ])
    }

    @Test func noMoreConnectionsWhenNothingIsLeftToShare() {
        var attempt = Self.attempt(total: 2 * Self.split - 1)
        _ = attempt.begin()
        _ = attempt.take(for: 0, first: true, at: .zero)
        #expect(attempt.tick(at: Self.ms(25)) { _ in true } == [])
    }

    @Test func aCheckpointWhenEnoughIsWrittenOrEnoughTimePassed() {
        var attempt = Self.attempt(mode: .fixed(1))
        _ = attempt.begin()
        let first = attempt.take(for: 0, first: true, at: .zero)!
        Self.fetch(&attempt, 0, first, bytes: 8 << 20, at: Self.ms(20))
        #expect(attempt.tick(at: Self.ms(25)) { _ in true } == [.checkpoint])
        #expect(attempt.tick(at: Self.ms(50)) { _ in true } == [])
        Self.fetch(&attempt, 0, .init(segment: first.segment, from: 8 << 20, to: first.to), bytes: 1, at: Self.ms(60))
        #expect(attempt.tick(at: Self.ms(1_000)) { _ in true } == [])
        #expect(attempt.tick(at: Self.ms(2_025)) { _ in true } == [.checkpoint])
        // Nothing new written: nothing to make durable, however long.
        #expect(attempt.tick(at: Self.ms(9_000)) { _ in true } == [])
    }

    @Test func aFullDiskFailsTheAttemptAtOnce() {
        var attempt = Self.attempt(mirrors: [Self.b])
        _ = attempt.begin()
        let error = FerryError(.diskFull, "No space left on the device.")
        #expect(attempt.ended(0, error: error, at: .zero) == [.fail(.init(error: error))])
    }

    @Test func theReferencesFileChangingRestartsAMirrorsIsDropped() {
        var attempt = Self.attempt(mirrors: [Self.b])
        _ = attempt.begin()
        _ = attempt.take(for: 0, first: true, at: .zero)
        _ = attempt.tick(at: Self.ms(25)) { _ in true }  // 1 and 3 to b, 2 to a
        let changed = FileChanged(reason: "the validator changed")
        #expect(attempt.ended(1, error: changed, at: Self.ms(30)) == [
            .dropSource(Self.b, reason: "its copy differs: the validator changed", forGood: true)
        ])
        // b's other connection stops after its current write.
        #expect(attempt.retired == [3])
        #expect(attempt.take(for: 3, first: false, at: Self.ms(30)) == nil)
        #expect(attempt.ended(2, error: changed, at: Self.ms(40)) == [.restart(reason: "the validator changed")])
    }

    @Test func aSourceWithoutTheFileIsDroppedWhileAnotherRemainsThenTheAttemptFails() {
        var attempt = Self.attempt(mirrors: [Self.b])
        _ = attempt.begin()
        _ = attempt.take(for: 0, first: true, at: .zero)
        _ = attempt.tick(at: Self.ms(25)) { _ in true }
        #expect(attempt.ended(1, error: Self.status(404), at: Self.ms(30)) == [.dropSource(Self.b, reason: "answered 404 R", forGood: true)])
        let refused = Self.status(403)
        #expect(attempt.ended(0, error: refused, at: Self.ms(40)) == [.fail(.init(error: refused))])
    }

    @Test func failuresWaitingCouldMendAreRetriedWithAGrowingPauseThenFail() {
        var attempt = Self.attempt()
        _ = attempt.begin()
        let busy = Self.status(503)
        #expect(attempt.ended(0, error: busy, at: .zero) == [.open(connection: 1, source: 0, counted: false, after: Self.ms(100))])
        #expect(attempt.ended(1, error: busy, at: Self.ms(100)) == [.open(connection: 2, source: 0, counted: false, after: Self.ms(200))])
        #expect(attempt.ended(2, error: busy, at: Self.ms(300)) == [.open(connection: 3, source: 0, counted: false, after: Self.ms(300))])
        #expect(attempt.ended(3, error: busy, at: Self.ms(600)) == [.fail(.init(error: busy))])
    }

    @Test func aConnectionThatEndsWellOrIsCancelledLeavesTheReopeningToTheTick() {
        var attempt = Self.attempt(mode: .fixed(1))
        _ = attempt.begin()
        #expect(attempt.ended(0, error: nil, at: .zero) == [])
        #expect(attempt.tick(at: Self.ms(25)) { _ in true } == [.open(connection: 1, source: 0, counted: false)])
        #expect(attempt.ended(1, error: CancellationError(), at: Self.ms(30)) == [])
    }

    @Test func aQuietConnectionsRangeGoesToTheNextThatAsks() {
        // 1.5 MiB: too small to split, so only a stall frees connection 0's range.
        var attempt = Self.attempt(total: Self.split * 3 / 2)
        _ = attempt.begin()
        let first = attempt.take(for: 0, first: true, at: .zero)!
        Self.fetch(&attempt, 0, first, bytes: 1000, at: Self.ms(1_000))
        #expect(attempt.take(for: 1, first: false, at: Self.ms(5_999)) == nil)
        let taken = attempt.take(for: 1, first: false, at: Self.ms(6_000))
        #expect(taken?.from == 1000)
        #expect(taken?.to == Self.split * 3 / 2)
    }

    @Test func aConnectionSlowAtTwoLooksAmongEightIsStoppedAndNotReplaced() {
        var attempt = Self.attempt(mode: .fixed(8))
        _ = attempt.begin()
        var assignments = [attempt.take(for: 0, first: true, at: .zero)!]
        #expect(attempt.tick(at: Self.ms(25)) { _ in true }.count == 7)
        for connection in 1..<8 { assignments.append(attempt.take(for: connection, first: false, at: Self.ms(30))!) }
        _ = attempt.tick(at: Self.ms(500)) { _ in true }  // the first look: rates from here
        var offsets = assignments.map(\.from)
        func look(at now: Int) -> [Action] {
            for connection in 0..<8 {
                let bytes: Int64 = connection == 7 ? 1 : 100_000
                let assignment = assignments[connection]
                Self.fetch(&attempt, connection, .init(segment: assignment.segment, from: offsets[connection], to: assignment.to), bytes: bytes, at: Self.ms(now - 10))
                offsets[connection] += bytes
            }
            return attempt.tick(at: Self.ms(now)) { _ in true }
        }
        _ = look(at: 1_000)
        #expect(attempt.retired.isEmpty)  // slow once
        #expect(look(at: 1_500).allSatisfy { if case .open = $0 { false } else { true } })
        #expect(attempt.retired == [7])
        #expect(attempt.received(10, on: 7, for: assignments[7], at: Self.ms(1_510)) == (0, true))
    }

    @Test func everyByteWrittenFinishes() {
        var attempt = Self.attempt(total: 1000, mode: .fixed(1))
        _ = attempt.begin()
        let first = attempt.take(for: 0, first: true, at: .zero)!
        Self.fetch(&attempt, 0, first, bytes: 1000, at: Self.ms(10))
        attempt.release(first.segment)
        #expect(!attempt.endedShort(0, segment: first.segment))
        #expect(attempt.tick(at: Self.ms(25)) { _ in true } == [.finish])
        #expect(attempt.ended(0, error: nil, at: Self.ms(30)) == [.finish])
    }

    @Test func aResponseThatStopsBeforeItsRangeIsShort() {
        var attempt = Self.attempt(total: 1000, mode: .fixed(1))
        _ = attempt.begin()
        let first = attempt.take(for: 0, first: true, at: .zero)!
        Self.fetch(&attempt, 0, first, bytes: 600, at: Self.ms(10))
        #expect(attempt.endedShort(0, segment: first.segment))
    }
}
