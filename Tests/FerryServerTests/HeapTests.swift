import FerryTestSupport
import Foundation
import Logging
import Testing

@testable import FerryServer

#if canImport(Glibc)
import Glibc
#endif

/// Freed memory goes back to the system. Measured on the pages of the blocks a test freed, with
/// `mincore`, not on the process's size, which the tests running beside these change at will.
@Suite(.serialized) struct HeapTests {
    /// 64 MiB of 4 KiB blocks, written to, then freed except every 64th: free runs of 252 KiB
    /// that malloc keeps, resident, between blocks still in use.
    final class FreedRuns {
        private var kept: [UnsafeMutableRawPointer] = []
        /// The page-aligned insides of the freed runs: (start, pages).
        private(set) var runs: [(UnsafeMutableRawPointer, Int)] = []
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

        init() {
            let blocks = (0..<16_384).map { _ in
                let block = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
                block.initializeMemory(as: UInt8.self, repeating: 1, count: 4096)
                return block
            }
            for (index, block) in blocks.enumerated() {
                if index % 64 == 0 { kept.append(block) } else { block.deallocate() }
            }
            // Pages wholly inside a run between two kept blocks (blocks are in address order
            // within a run only when malloc gave them out so; check rather than assume).
            for (a, b) in zip(kept, kept.dropFirst()) where b > a && b - a < 1 << 20 {
                let start = (Int(bitPattern: a) + 4096 + 64 + pageSize - 1) / pageSize * pageSize
                let end = (Int(bitPattern: b) - 64) / pageSize * pageSize
                if end > start { runs.append((UnsafeMutableRawPointer(bitPattern: start)!, (end - start) / pageSize)) }
            }
        }

        /// How many of the runs' pages are resident, and of how many.
        func resident() -> (resident: Int, pages: Int) {
            var resident = 0, pages = 0
            for (start, count) in runs {
                var vector = [UInt8](repeating: 0, count: count)
                guard mincore(start, count * pageSize, &vector) == 0 else { continue }
                resident += vector.filter { $0 & 1 == 1 }.count
                pages += count
            }
            return (resident, pages)
        }

        deinit { kept.forEach { $0.deallocate() } }
    }

    @Test func trimGivesFreedPagesBack() throws {
        let freed = FreedRuns()
        let before = freed.resident()
        try #require(before.pages > 8_000, "the freed runs cover most of the 64 MiB")
        #expect(before.resident > before.pages * 9 / 10, "malloc keeps freed pages resident")
        Heap.trim()
        let after = freed.resident()
        #expect(after.resident < after.pages / 4, "trimmed: \(after.resident) of \(after.pages) pages resident")
    }

    @Test func theTrimmerTrimsOnceFreedMemoryPilesUp() async throws {
        let clock = ManualClock()
        let trimmer = HeapTrimmer(clock: clock, logger: Logger(label: "heap"))
        let task = Task { try await trimmer.run() }
        defer { task.cancel() }
        while clock.sleeperCount == 0 { try await Task.sleep(for: .milliseconds(5)) }  // it has its mark
        let freed = FreedRuns()
        #expect(freed.resident().resident > freed.resident().pages * 9 / 10)
        clock.advance(by: .seconds(30))
        var after = freed.resident()
        for _ in 0..<500 where after.resident >= after.pages / 4 {
            try await Task.sleep(for: .milliseconds(10))
            after = freed.resident()
        }
        #expect(after.resident < after.pages / 4, "trimmed: \(after.resident) of \(after.pages) pages resident")
    }
}

/// The trimmer's rule, apart from the clock and /proc.
@Suite struct HeapMarkTests {
    @Test func trimsOnlyWhenMemoryRoseMoreThanTheSlack() {
        var mark = HeapMark(level: 100, slack: 16)
        let atSlack = mark.wantsTrim(at: 116)
        let aboveSlack = mark.wantsTrim(at: 117)
        #expect(!atSlack)
        #expect(aboveSlack)
    }

    @Test func followsMemoryDownSoThatANewPileIsSeen() {
        var mark = HeapMark(level: 100, slack: 16)
        let low = mark.wantsTrim(at: 40)
        #expect(!low)
        #expect(mark.level == 40)
        let risen = mark.wantsTrim(at: 60)
        #expect(risen, "20 above the lowest level, though below the first")
    }

    @Test func aTrimThatLeftMemoryInUseSetsTheMark() {
        var mark = HeapMark(level: 10, slack: 16)
        let piled = mark.wantsTrim(at: 200)
        #expect(piled)
        mark.trimmed(to: 150)
        let inUse = mark.wantsTrim(at: 160)
        #expect(!inUse, "in use after the trim: no trim every interval")
        let piledAgain = mark.wantsTrim(at: 170)
        #expect(piledAgain)
    }
}
