import Foundation
import Testing

@testable import FerryCore

/// Sharing a file's ranges among connections, without I/O: taking, stealing half of the largest
/// remainder (never under the minimum), a stalled connection's remainder, releasing, the written
/// prefix the hash follows, durable ranges and the journal's form.
@Suite struct SegmentPlanTests {
    static let mib: Int64 = 1 << 20
    /// A request size larger than any file here: a bounded request for all that is left.
    static let bounded: Int64 = 1 << 40

    @Test func theFirstConnectionTakesTheWholeFile() {
        var plan = SegmentPlan(total: 10 * Self.mib)
        #expect(plan.take(for: 0) == .init(segment: 0, from: 0, to: 10 * Self.mib))
        #expect(plan.connections == [0])
    }

    @Test func aResumedPlanStartsAfterTheDurableBytes() {
        var plan = SegmentPlan(total: 10 * Self.mib, done: 3 * Self.mib)
        let assignment = plan.take(for: 0)
        #expect(assignment?.from == 3 * Self.mib)
        #expect(assignment?.to == 10 * Self.mib)
        #expect(plan.writtenPrefix == 3 * Self.mib)
    }

    /// Each newcomer takes the upper half of the largest remainder, so all end together.
    @Test func newcomersTakeHalfOfTheLargestRemainder() {
        var plan = SegmentPlan(total: 16 * Self.mib)
        _ = plan.take(for: 0, size: Self.bounded)
        #expect(plan.accept(2 * Self.mib, for: 0) == 2 * Self.mib)  // 0 is at 2 MiB of 16.
        let second = plan.take(for: 1, size: Self.bounded)!
        #expect(second.from == 9 * Self.mib && second.to == 16 * Self.mib)
        #expect(plan.accept(Self.mib, for: 0) == Self.mib)  // 0 is at 3 MiB, 6 left; the second has 7.
        let third = plan.take(for: 2)!
        // The largest remainder is the second's (7 MiB), from 9: split at 12.5.
        #expect(third.from == 9 * Self.mib + 7 * Self.mib / 2 && third.to == 16 * Self.mib)
        #expect(plan.segments[second.segment]?.end == third.from)
        // Coverage stays whole: the ranges join up from 0 to the end.
        let ranges = plan.ordered.map { ($0.segment.start, $0.segment.end) }
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.1 == $1.0 })
        #expect(ranges.first?.0 == 0 && ranges.last?.1 == 16 * Self.mib)
    }

    /// Unasked bytes go out in order, a request's worth at a time; a remainder under half a
    /// request goes with the one before it.
    @Test func connectionsTakeTheLowestUnaskedBytesARequestAtATime() {
        var plan = SegmentPlan(total: 10 * Self.mib)
        #expect(plan.take(for: 0, size: 4 * Self.mib) == .init(segment: 0, from: 0, to: 4 * Self.mib))
        let second = plan.take(for: 1, size: 4 * Self.mib)
        #expect(second?.from == 4 * Self.mib && second?.to == 10 * Self.mib)  // 2 MiB would be left: it goes too.
        #expect(plan.unasked == 0)
        // The first finishes and asks again: nothing unasked, so half of the second's remainder.
        _ = plan.accept(4 * Self.mib, for: 0)
        plan.wrote(0, through: 4 * Self.mib)
        plan.release(0)
        let third = plan.take(for: 0, size: 4 * Self.mib)
        #expect(third?.from == 7 * Self.mib && third?.to == 10 * Self.mib)
    }

    /// The first response asked for the whole file; a newcomer cuts it a little past where it is,
    /// and the rest is shared out in order.
    @Test func theFirstResponseIsCutJustPastWhereItIs() {
        var plan = SegmentPlan(total: 64 * Self.mib)
        let first = plan.take(for: 0)!
        #expect(first.to == 64 * Self.mib)
        _ = plan.accept(3 * Self.mib, for: first.segment)
        let second = plan.take(for: 1, size: 2 * Self.mib)!
        #expect(plan.segments[first.segment]?.end == 3 * Self.mib + Self.mib / 4)
        #expect(second.from == 3 * Self.mib + Self.mib / 4 && second.to == second.from + 2 * Self.mib)
        #expect(plan.take(for: 2, size: 2 * Self.mib)?.from == second.to)
    }

    @Test func requestsAreTwoSecondsOfAConnectionsShareAndShrinkNearTheEnd() {
        let size = { (rate: Double, connections: Int, unasked: Int64, alone: Bool) in
            SegmentPlan.requestSize(rate: rate, connections: connections, unasked: unasked, alone: alone, minimumSplit: Self.mib)
        }
        #expect(size(16 * 4e6, 16, 1 << 30, false) == 8_000_000)
        #expect(size(0, 4, 1 << 30, false) == Self.mib)  // No rate yet: the minimum.
        #expect(size(1e10, 1, 1 << 40, false) == 64 * Self.mib)  // At most 64 MiB.
        #expect(size(16 * 4e6, 16, 32 * Self.mib, false) == Self.mib)  // Near the end: a share of what is left...
        #expect(size(16 * 4e6, 16, Self.mib, false) == Self.mib / 4)  // ...down to a quarter of the minimum.
        #expect(size(16 * 4e6, 1, 1 << 30, true) == .max)  // Alone: all of it.
    }

    @Test func nothingUnderTwiceTheMinimumIsSplit() {
        var plan = SegmentPlan(total: 2 * Self.mib - 1)
        _ = plan.take(for: 0, size: Self.bounded)
        #expect(plan.take(for: 1) == nil)
        #expect(!plan.hasWorkToShare)
    }

    /// A connection whose range was cut below what it received gets only the bytes still its own.
    @Test func aShrunkRangeAcceptsOnlyItsOwnBytes() {
        var plan = SegmentPlan(total: 4 * Self.mib)
        let first = plan.take(for: 0, size: Self.bounded)!
        _ = plan.take(for: 1, size: Self.bounded)  // 0 now ends at 2 MiB.
        #expect(plan.accept(Self.mib, for: first.segment) == Self.mib)
        #expect(plan.accept(2 * Self.mib, for: first.segment) == Self.mib)
        #expect(plan.accept(10, for: first.segment) == 0)
    }

    /// A stalled connection's remainder goes whole to the next that asks, from what it wrote.
    @Test func aStalledConnectionsRemainderIsTaken() {
        var plan = SegmentPlan(total: 3 * Self.mib)
        let first = plan.take(for: 0, size: Self.bounded)!
        _ = plan.accept(Self.mib / 2, for: first.segment)
        plan.wrote(first.segment, through: Self.mib / 4)  // The rest is in its buffer.
        let second = plan.take(for: 1, size: Self.bounded)!
        _ = plan.accept(3 * Self.mib, for: second.segment)
        plan.wrote(second.segment, through: second.to)
        plan.release(second.segment)
        #expect(plan.take(for: 1) == nil)  // 0's remainder is under twice the minimum... halved once already.
        let taken = plan.take(for: 1, stalled: [0])!
        #expect(taken.from == Self.mib / 4)
        #expect(plan.accept(100, for: first.segment) == 0)  // The quiet one stops when it wakes.
    }

    @Test func releasingForgetsReceivedButUnwrittenBytes() {
        var plan = SegmentPlan(total: 4 * Self.mib)
        let first = plan.take(for: 0, size: Self.bounded)!
        _ = plan.accept(Self.mib, for: first.segment)
        plan.wrote(first.segment, through: Self.mib / 2)
        plan.release(first.segment)
        #expect(plan.take(for: 3)?.from == Self.mib / 2)
    }

    /// The hash follows the file from its start: across a finished range into the next one, and
    /// not past a gap.
    @Test func theWrittenPrefixStopsAtTheFirstGap() {
        var plan = SegmentPlan(total: 4 * Self.mib)
        let first = plan.take(for: 0, size: Self.bounded)!
        let second = plan.take(for: 1, size: Self.bounded)!  // 2..4 MiB
        _ = plan.accept(Self.mib, for: second.segment)
        plan.wrote(second.segment, through: second.from + Self.mib)
        #expect(plan.writtenPrefix == 0)
        _ = plan.accept(2 * Self.mib, for: first.segment)
        plan.wrote(first.segment, through: 2 * Self.mib)
        #expect(plan.writtenPrefix == 3 * Self.mib)
        #expect(plan.writtenBytes == 3 * Self.mib)
        #expect(!plan.isComplete)
    }

    @Test func durableRangesRoundTripThroughTheJournalAndFinishedOnesMerge() throws {
        var plan = SegmentPlan(total: 4 * Self.mib)
        let first = plan.take(for: 0, size: Self.bounded)!
        let second = plan.take(for: 1, size: Self.bounded)!
        _ = plan.accept(2 * Self.mib, for: first.segment)
        plan.wrote(first.segment, through: 2 * Self.mib)
        _ = plan.accept(Self.mib, for: second.segment)
        plan.wrote(second.segment, through: 3 * Self.mib)
        plan.madeDurable(plan.writtenOffsets)
        plan.release(first.segment)
        plan.release(second.segment)
        let text = SegmentPlan.journalText(plan.durableRanges)
        #expect(text == "[[0,\(2 * Self.mib),\(2 * Self.mib)],[\(2 * Self.mib),\(3 * Self.mib),\(4 * Self.mib)]]")
        let ranges = try #require(SegmentPlan.ranges(journalText: text))
        #expect(SegmentPlan.ranges(ranges, cover: 4 * Self.mib))
        var resumed = SegmentPlan(total: 4 * Self.mib, durable: ranges)
        #expect(resumed.durableBytes == 3 * Self.mib)
        #expect(resumed.take(for: 0)?.from == 3 * Self.mib)
        // Finishing the second range merges the two into one.
        _ = resumed.accept(Self.mib, for: 1)
        resumed.wrote(1, through: 4 * Self.mib)
        resumed.madeDurable(resumed.writtenOffsets)
        resumed.release(1)
        #expect(resumed.isComplete)
        #expect(resumed.durableRanges.count == 1)
    }

    static let badRanges: [String] = ["", "[[0,5]]", "[[1,2,10]]", "[[0,2,4],[5,6,10]]", "[[0,6,4],[4,4,10]]", "not json", "[[0,2,4]]"]

    @Test(arguments: badRanges)
    func brokenJournalRangesAreRefused(_ text: String) {
        let ranges = SegmentPlan.ranges(journalText: text)
        #expect(ranges.map { SegmentPlan.ranges($0, cover: 10) } != true)
    }
}

/// The adaptive connection count: growing fourfold while it pays, holding once it does not.
@Suite struct ConnectionTunerTests {
    /// Feeds `rate(connections)` bytes a second in 100 ms steps; returns the targets seen.
    static func run(_ tuner: inout ConnectionTuner, seconds: Double, rate: (Int) -> Double) -> [Int] {
        var bytes: Int64 = 0
        var targets: [Int] = []
        var target = tuner.target
        for step in 0..<Int(seconds * 10) {
            bytes += Int64(rate(target) / 10)
            target = tuner.sample(bytes: bytes, at: .milliseconds(100 * step), running: target)
            if targets.last != target { targets.append(target) }
        }
        return targets
    }

    @Test func aThrottledServerGetsMoreConnectionsUpToTheCap() {
        var tuner = ConnectionTuner(mode: .adaptive(maximum: 16))
        let targets = Self.run(&tuner, seconds: 10) { Double($0) * 4_000_000 }  // 4 MB/s each
        #expect(targets == [1, 4, 16])
        #expect(tuner.isDone)
    }

    @Test func aLinkThatOneConnectionFillsStaysNearOne() {
        var tuner = ConnectionTuner(mode: .adaptive(maximum: 16))
        let targets = Self.run(&tuner, seconds: 10) { _ in 50_000_000 }
        #expect(targets == [1, 4, 1])
        #expect(tuner.isDone)
    }

    /// One connection at loopback speed is no throttled one: no probe while it stays that fast;
    /// once it slows (a server's first-second burst was over), the probe goes on as usual.
    @Test func aFastConnectionIsNotSplitUntilItSlows() {
        var fast = ConnectionTuner(mode: .adaptive(maximum: 16))
        #expect(Self.run(&fast, seconds: 5) { _ in 500_000_000 } == [1])
        var bursting = ConnectionTuner(mode: .adaptive(maximum: 16))
        var bytes: Int64 = 0
        var targets: [Int] = []
        var target = bursting.target
        for step in 0..<60 {
            // 200 MB/s in the first second, then 4 MB/s a connection.
            bytes += step < 10 ? 20_000_000 : Int64(target) * 400_000
            target = bursting.sample(bytes: bytes, at: .milliseconds(100 * step), running: target)
            if targets.last != target { targets.append(target) }
        }
        #expect(targets == [1, 4, 16])
    }

    /// The link fills at 50 MB/s: growing stops once it no longer pays.
    @Test func growingStopsWhereTheLinkIsFull() {
        var tuner = ConnectionTuner(mode: .adaptive(maximum: 16))
        let targets = Self.run(&tuner, seconds: 10) { min(Double($0) * 4_000_000, 50_000_000) }
        #expect(targets == [1, 4, 16])
        var slower = ConnectionTuner(mode: .adaptive(maximum: 16))
        let few = Self.run(&slower, seconds: 10) { min(Double($0) * 45_000_000, 50_000_000) }
        #expect(few == [1, 4, 1])
        var capped = ConnectionTuner(mode: .adaptive(maximum: 6))
        #expect(Self.run(&capped, seconds: 10) { Double($0) * 1_000_000 } == [1, 4, 6])
    }

    /// Four young connections look as fast as the link (a server's first-second burst); sixteen
    /// are no faster but are kept, as going back would leave four throttled ones. Sixteen that
    /// make it slower (a busy disk) go back to four.
    @Test func aLaterStepIsUndoneOnlyWhenItMadeThingsSlower() {
        var bursting = ConnectionTuner(mode: .adaptive(maximum: 16))
        #expect(Self.run(&bursting, seconds: 10) { $0 == 1 ? 4_000_000 : 48_000_000 } == [1, 4, 16])
        var thrashing = ConnectionTuner(mode: .adaptive(maximum: 16))
        #expect(Self.run(&thrashing, seconds: 10) { $0 == 1 ? 4_000_000 : $0 == 4 ? 48_000_000 : 30_000_000 } == [1, 4, 16, 4])
    }

    /// One miss may be noise: the step after it is measured again before the adding ends.
    @Test func oneNoisyWindowDoesNotEndTheAdding() {
        var tuner = ConnectionTuner(mode: .adaptive(maximum: 16))
        var bytes: Int64 = 0
        var targets: [Int] = []
        var target = tuner.target
        for step in 0..<100 {
            // Throttled at 4 MB/s a connection, except for a stall of 0.3 s at 4 connections.
            let stalled = target == 4 && (6...8).contains(step)
            bytes += stalled ? 0 : Int64(target) * 400_000
            target = tuner.sample(bytes: bytes, at: .milliseconds(100 * step), running: target)
            if targets.last != target { targets.append(target) }
        }
        #expect(targets == [1, 4, 16])
    }

    /// Under a bandwidth limit it reaches, more connections cannot help.
    @Test func aBandwidthLimitStopsTheAdding() {
        var tuner = ConnectionTuner(mode: .adaptive(maximum: 16), limit: 1_000_000)
        let targets = Self.run(&tuner, seconds: 10) { min(Double($0) * 300_000, 1_000_000) }
        #expect(targets == [1, 4])
    }

    @Test func aFixedNumberIsKept() {
        var tuner = ConnectionTuner(mode: .fixed(8))
        #expect(Self.run(&tuner, seconds: 3) { Double($0) } == [8])
    }

    /// When the plan cannot give the connections asked for work, the tuner stops asking.
    @Test func itStopsWhenTheConnectionsAskedForNeverRun() {
        var tuner = ConnectionTuner(mode: .adaptive(maximum: 16))
        var target = tuner.target
        for step in 0..<40 {
            target = tuner.sample(bytes: Int64(step) * 400_000, at: .milliseconds(100 * step), running: 1)
        }
        #expect(target == 4)
        #expect(tuner.isDone)
    }
}
