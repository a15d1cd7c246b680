import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Stopping and starting again: graceful shutdown checkpoints, the next engine continues from
/// the durable bytes, and recovery repairs what a crash interrupted.
@Suite struct TransferEngineRecoveryTests {
    @Test func aGracefulShutdownCheckpointsAndTheNextStartResumes() async throws {
        let file = Origin.File(data: Origin.bytes(2_000_000))
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.holdAfter(300_000, gate)])  // until the first engine has stopped
            try await withTemporaryDirectory { home in
                let id = try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    try await h.wait(t.id, bytes: 300_000)
                    return t.id
                }
                gate.open()
                // After shutdown: still "running" in the journal, and every journaled byte is on disk.
                let journal = try SQLiteJournal.open(at: home.appendingPathComponent("state/journal.sqlite"))
                let record = try #require(try await journal.transfer(id: id))
                #expect(record.state == .running)
                #expect(record.durableBytes == 300_000)
                let part = home.appendingPathComponent("library/.partial/\(id).part")
                let size = try FileManager.default.attributesOfItem(atPath: part.path)[.size] as! Int64
                #expect(size == record.durableBytes)

                try await EngineHarness.run(home: home) { h in
                    let done = try await h.wait(id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(origin.requests(for: "/f").last?.range == "bytes=\(record.durableBytes)-")
                }
            }
        }
    }

    /// More queued transfers than slots, one of them running when the last engine stopped: the
    /// next start runs them all (the torture run's chaos part once found a start that ran none).
    @Test func aStartRunsTheQueueTheLastEngineLeft() async throws {
        try await Origin.run { origin, base in
            let files = (0..<6).map { Origin.File(data: Origin.bytes(50_000 + $0, seed: UInt64($0))) }
            for (n, file) in files.enumerated() { origin.serve("/\(n)", file) }
            let gate = Origin.Gate()
            origin.script("/0", [.holdAfter(10_000, gate)])
            try await withTemporaryDirectory { home in
                var configuration = TransferEngine.Configuration.fast
                configuration.maxConcurrent = 1
                let ids = try await EngineHarness.run(home: home, configuration: configuration) { h in
                    let first = try await h.get(base.appendingPathComponent("0"))
                    try await h.wait(first.id, bytes: 10_000)
                    var ids = [first.id]
                    for n in 1..<files.count { ids.append(try await h.get(base.appendingPathComponent("\(n)")).id) }
                    return ids
                }
                configuration.maxConcurrent = 2
                gate.open()
                try await EngineHarness.run(home: home, configuration: configuration) { h in
                    for (id, file) in zip(ids, files) {
                        let done = try await h.wait(id, for: .completed)
                        #expect(done.sha256 == file.sha256)
                    }
                }
            }
        }
    }

    @Test func startTruncatesThePartFileToTheDurableBytes() async throws {
        let file = Origin.File(data: Origin.bytes(400_000))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                // A crash after writing bytes that were never checkpointed, by a daemon that
                // recorded no boot: only the 100000 durable bytes are trusted, not the garbage.
                let id = try await Self.crashedDownload(home: home, url: base.appendingPathComponent("f"), boot: nil,
                                                        tail: Data(repeating: 0xEE, count: 50_000))
                try await EngineHarness.run(home: home) { h in
                    let done = try await h.wait(id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(origin.requests(for: "/f").first?.range == "bytes=100000-")
                }
            }
        }
    }

    /// The daemon was killed, the machine kept running: every byte written is in the page cache,
    /// so the next daemon resumes from the part file's end, not from the last checkpoint.
    @Test func aTailWrittenSinceTheLastCheckpointIsKeptInTheSameBoot() async throws {
        let file = Origin.File(data: Origin.bytes(400_000))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                let id = try await Self.crashedDownload(home: home, url: base.appendingPathComponent("f"), boot: "boot-a",
                                                        tail: file.data[100_000..<150_000])
                var configuration = TransferEngine.Configuration.fast
                configuration.bootID = "boot-a"
                try await EngineHarness.run(home: home, configuration: configuration) { h in
                    let done = try await h.wait(id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(origin.requests(for: "/f").first?.range == "bytes=150000-")
                }
            }
        }
    }

    /// After a reboot a tail past the checkpoint may be garbage: every part file is cut back to
    /// its durable bytes at start, even a paused transfer's, before the new boot is recorded (so
    /// a later daemon in this boot does not trust that old tail).
    @Test func afterARebootEveryPartFileIsCutToItsCheckpoint() async throws {
        let file = Origin.File(data: Origin.bytes(400_000))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            try await withTemporaryDirectory { home in
                let id = try await Self.crashedDownload(home: home, url: base.appendingPathComponent("f"), boot: "boot-a",
                                                        tail: Data(repeating: 0xEE, count: 50_000), state: .paused)
                var configuration = TransferEngine.Configuration.fast
                configuration.bootID = "boot-b"
                try await EngineHarness.run(home: home, configuration: configuration) { h in
                    // The boot is recorded once every part file is settled.
                    try await eventually("the new boot recorded") { try await h.journal.lastBoot() == "boot-b" }
                    let size = try FileManager.default.attributesOfItem(atPath: h.library.partURL(for: id).path)[.size] as? Int64
                    #expect(size == 100_000)
                    #expect(try await h.journal.transfer(id: id)?.state == .paused)
                }
                try await EngineHarness.run(home: home, configuration: configuration) { h in
                    _ = try await h.engine.resume(id)
                    let done = try await h.wait(id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(origin.requests(for: "/f").first?.range == "bytes=100000-")
                }
            }
        }
    }

    /// A journal left by a daemon that ran in `boot` (nil: recorded none), checkpointed at
    /// 100,000 bytes of a 400,000-byte file, whose part file holds those bytes and then `tail`.
    private static func crashedDownload(
        home: URL, url: URL, boot: String?, tail: Data, state: TransferState = .running
    ) async throws -> Int64 {
        let journal = try SQLiteJournal.open(at: home.appendingPathComponent("state/journal.sqlite"))
        if let boot { try await journal.recordBoot(boot) }
        var draft = TransferRecord(session: "test", url: url.absoluteString, folder: "Downloads")
        draft.state = state
        draft.durableBytes = 100_000
        draft.totalBytes = 400_000
        draft.validator = "\"v1\""
        let id = try await journal.createTransfer(draft, reuseExisting: false).record.transferId
        let partials = home.appendingPathComponent("library/.partial")
        try FileManager.default.createDirectory(at: partials, withIntermediateDirectories: true)
        try (Origin.bytes(400_000).prefix(100_000) + tail).write(to: partials.appendingPathComponent("\(id).part"))
        return id
    }

    @Test func recoveryFinishesAMoveInterruptedBeforeTheJournalEntry() async throws {
        try await withTemporaryDirectory { home in
            let data = Origin.bytes(5000)
            let journal = try SQLiteJournal.open(at: home.appendingPathComponent("state/journal.sqlite"))
            // Crash window: the name and hash are journaled, the part file linked into the
            // library, but it was never unlinked nor the transfer marked completed.
            var draft = TransferRecord(session: "test", url: "http://127.0.0.1:9/x.bin", folder: "Downloads")
            draft.state = .running
            draft.fileName = "x.bin"
            draft.sha256 = data.sha256Hex
            draft.durableBytes = 5000
            draft.totalBytes = 5000
            let id = try await journal.createTransfer(draft, reuseExisting: false).record.transferId
            let library = home.appendingPathComponent("library")
            try FileManager.default.createDirectory(at: library.appendingPathComponent(".partial"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: library.appendingPathComponent("Downloads"), withIntermediateDirectories: true)
            let part = library.appendingPathComponent(".partial/\(id).part")
            try data.write(to: part)
            try FileManager.default.linkItem(at: part, to: library.appendingPathComponent("Downloads/x.bin"))

            try await EngineHarness.run(home: home) { h in
                let done = try await h.wait(id, for: .completed)
                #expect(done.path == h.library.absolute("Downloads/x.bin").path)
                #expect(done.sha256 == data.sha256Hex)
                #expect(!h.partFileExists(id))
            }
        }
    }

    @Test func orphanPartFilesAreDeletedAtStart() async throws {
        try await withTemporaryDirectory { home in
            let partials = home.appendingPathComponent("library/.partial")
            try FileManager.default.createDirectory(at: partials, withIntermediateDirectories: true)
            try Data("x".utf8).write(to: partials.appendingPathComponent("77.part"))
            try Data("x".utf8).write(to: partials.appendingPathComponent("stray.tmp"))
            try await EngineHarness.run(home: home) { h in
                try await eventually("orphans gone") { h.allFiles().filter { $0.contains(".partial/") }.isEmpty }
            }
        }
    }

    @Test func waitingRetriesSurviveARestart() async throws {
        let file = Origin.File(data: Origin.bytes(1000))
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.status(503, retryAfter: "1")])
            try await withTemporaryDirectory { home in
                let id = try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("f"))
                    try await h.wait(t.id, for: .waiting)
                    return t.id
                }
                try await EngineHarness.run(home: home) { h in
                    let done = try await h.wait(id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                }
            }
        }
    }
}
