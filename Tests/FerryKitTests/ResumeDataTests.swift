import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Resume data: an opaque blob that another run of the program hands back, which continues the
/// download from the bytes on disk (counted at the origin), even after a daemon restart, and
/// fails clearly once the daemon no longer has them.
@Suite struct ResumeDataTests {
    static let size = 600_000
    static let file = Origin.File(data: Origin.bytes(size, seed: 7))
    /// Where the origin holds the first response until the test opens the gate (or ends), so a
    /// cancel lands midway however slow the machine.
    static let half = size / 2

    /// Serves the file, its first response held at ``half``.
    static func serveHeldHalfway(_ origin: Origin, _ gate: Origin.Gate) {
        origin.serve("/episode.mp3", file)
        origin.script("/episode.mp3", [.holdAfter(half, gate)])
    }

    @Test func cancellingWithResumeDataThenResumingInAnotherRunFetchesOnlyTheRemainingBytes() async throws {
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            Self.serveHeldHalfway(origin, gate)
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let url = base.appendingPathComponent("episode.mp3")
                    let first = try await d.session("fetcher")
                    let task = try await first.downloadTask(with: url)
                    try await Self.waitForHalf(task)
                    let produced = try await task.cancelByProducingResumeData()
                    let data = try #require(produced)
                    #expect(task.state == .cancelled)
                    let blob = try ResumeData(blob: data)
                    #expect(blob.transferId == task.taskIdentifier)
                    #expect(blob.url == url.absoluteString)

                    // The next run of the program continues the same task.
                    let second = try await d.session("fetcher")
                    let resumed = try await second.downloadTask(withResumeData: data)
                    #expect(resumed.taskIdentifier == task.taskIdentifier)
                    let events = try await collect(second) { $0.finished[task.taskIdentifier] != nil }

                    try Self.expectResumedDownload(events, id: task.taskIdentifier, origin: origin)
                }
            }
        }
    }

    @Test func resumeDataSurvivesADaemonRestart() async throws {
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            Self.serveHeldHalfway(origin, gate)
            try await withTemporaryDirectory { home in
                let (data, id) = try await DaemonHarness.run(home: home) { d in
                    let session = try await d.session("fetcher")
                    let task = try await session.downloadTask(with: base.appendingPathComponent("episode.mp3"))
                    try await Self.waitForHalf(task)
                    let produced = try await task.cancelByProducingResumeData()
                    return (try #require(produced), task.taskIdentifier)
                }
                // Another daemon on the same state, another program run.
                try await DaemonHarness.run(home: home) { d in
                    let session = try await d.session("fetcher")
                    let resumed = try await session.downloadTask(withResumeData: data)
                    #expect(resumed.taskIdentifier == id)
                    let events = try await collect(session) { $0.finished[id] != nil }

                    try Self.expectResumedDownload(events, id: id, origin: origin)
                    try await resumed.refresh()
                    #expect(resumed.state == .completed)
                    #expect(resumed.transfer.sha256 == Self.file.sha256)
                }
            }
        }
    }

    @Test func staleResumeDataFailsClearlyAndTheCallerCanStartOver() async throws {
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            Self.serveHeldHalfway(origin, gate)
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let session = try await d.session("fetcher")
                    let task = try await session.downloadTask(with: base.appendingPathComponent("episode.mp3"))
                    try await Self.waitForHalf(task)
                    let produced = try await task.cancelByProducingResumeData()
                    let data = try #require(produced)
                    // Resumed (its response held too), then cancelled for good: the daemon
                    // deletes the partial file.
                    origin.script("/episode.mp3", [.holdAfter(50_000, gate)])
                    let resumed = try await session.downloadTask(withResumeData: data)
                    try await eventually("the resumed request at the origin") { origin.requests(for: "/episode.mp3").count == 2 }
                    try await resumed.cancel()
                    #expect(resumed.state == .cancelled)
                    let nothing = try await resumed.cancelByProducingResumeData()
                    #expect(nothing == nil, "a task cancelled without resume data has none to give")

                    let error = await #expect(throws: FerryError.self) {
                        try await session.downloadTask(withResumeData: data)
                    }
                    #expect(error?.code == .resumeDataStale)
                    #expect(error?.message.contains("start the download again") == true, "\(String(describing: error))")

                    // Starting over: a new task for the URL the blob names, from the first byte.
                    let url = try #require(URL(string: try ResumeData(blob: data).url))
                    let fresh = try await session.downloadTask(with: url)
                    #expect(fresh.taskIdentifier != task.taskIdentifier)
                    let events = try await collect(session) { $0.finished[fresh.taskIdentifier] != nil }
                    #expect(events.finished[fresh.taskIdentifier]?.sha256 == Self.file.sha256)
                    #expect(origin.requests(for: "/episode.mp3").last?.range == nil)
                }
            }
        }
    }

    @Test func resumeDataThatIsNotThisSessionsIsRefused() async throws {
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            Self.serveHeldHalfway(origin, gate)
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let owner = try await d.session("owner")
                    let task = try await owner.downloadTask(with: base.appendingPathComponent("episode.mp3"))
                    let produced = try await task.cancelByProducingResumeData()
                    let data = try #require(produced)

                    let stranger = try await d.session("stranger")
                    let foreign = await #expect(throws: FerryError.self) { try await stranger.downloadTask(withResumeData: data) }
                    #expect(foreign?.code == .resumeDataInvalid)
                    #expect(foreign?.message.contains("'owner'") == true)
                    let garbage = await #expect(throws: FerryError.self) {
                        try await stranger.downloadTask(withResumeData: Data("not resume data".utf8))
                    }
                    #expect(garbage?.code == .resumeDataInvalid)
                    let strangersTasks = try await stranger.allTasks()
                    #expect(strangersTasks.isEmpty)
                }
            }
        }
    }

    // MARK: Helpers

    static func waitForHalf(_ task: DownloadTask) async throws {
        try await eventually("half the file") {
            try await task.refresh()
            return task.countOfBytesReceived == Int64(half)
        }
    }

    /// The download finished with the right bytes after continuing with a range request from the
    /// bytes on disk, and the origin sent little more than the file once.
    static func expectResumedDownload(_ events: [DownloadEvent], id: Int64, origin: Origin) throws {
        let finished = try #require(events.finished[id], "\(events.summary)")
        #expect(finished.sha256 == file.sha256)
        #expect(FileManager.default.contents(atPath: finished.location.path) == file.data)
        let offset = try #require(events.compactMap(\.resumeOffset).max(), "\(events.summary)")
        #expect(offset == Int64(half), "resumed from every byte on disk")
        let requests = origin.requests(for: "/episode.mp3")
        #expect(requests.count == 2)
        #expect(requests.last?.range == "bytes=\(offset)-")
        // The resumed request carried exactly the bytes that were missing.
        #expect(origin.bytesSentPerRequest("/episode.mp3").last == size - Int(offset))
    }
}
