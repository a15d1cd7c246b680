import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Tasks: listed across runs, one per call, suspended and resumed, with progress; and how a
/// session is made.
@Suite struct DownloadTaskTests {
    @Test func allTasksListsTheTasksOfAnEarlierRunAndNoOtherSessions() async throws {
        try await Origin.run { origin, base in
            origin.serve("/1.mp3", .init(data: Origin.bytes(10_000, seed: 1)))
            origin.serve("/2.mp3", .init(data: Origin.bytes(20_000, seed: 2)))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let url1 = base.appendingPathComponent("1.mp3")
                    let url2 = base.appendingPathComponent("2.mp3")
                    var earlier: BackgroundSession? = try await d.session("podcasts")
                    let one = try await earlier!.downloadTask(with: url1, taskDescription: "Episode 1")
                    let two = try await earlier!.downloadTask(with: url2, taskDescription: "Episode 2")
                    earlier = nil
                    let other = try await d.session("other").downloadTask(with: url1)

                    let session = try await d.session("podcasts")
                    let tasks = try await session.allTasks()
                    #expect(tasks.map(\.taskIdentifier) == [one.taskIdentifier, two.taskIdentifier])
                    #expect(tasks.map(\.taskDescription) == ["Episode 1", "Episode 2"])
                    #expect(tasks.map(\.url) == [url1, url2])
                    #expect(tasks == [one, two], "equal to the first run's task objects")

                    let found = try await session.task(withIdentifier: two.taskIdentifier)
                    #expect(found?.taskDescription == "Episode 2")
                    let foreign = try await session.task(withIdentifier: other.taskIdentifier)
                    #expect(foreign == nil)
                    let missing = try await session.task(withIdentifier: 999_999)
                    #expect(missing == nil)
                }
            }
        }
    }

    @Test func everyCallMakesANewTaskEvenForTheSameURL() async throws {
        let file = Origin.File(data: Origin.bytes(30_000, seed: 5))
        try await Origin.run { origin, base in
            origin.serve("/same.mp3", file)
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let session = try await d.session("app")
                    let url = base.appendingPathComponent("same.mp3")
                    let first = try await session.downloadTask(with: url)
                    try await eventually("the first to complete") { try await d.client.transfer(first.taskIdentifier).state == .completed }
                    let second = try await session.downloadTask(with: url)
                    #expect(second.taskIdentifier != first.taskIdentifier)
                    #expect(second.state == .queued)

                    let events = try await collect(session) { $0.finished.count == 2 }
                    let locations = Set([first, second].compactMap { events.finished[$0.taskIdentifier]?.location.lastPathComponent })
                    #expect(locations == ["same.mp3", "same (2).mp3"])
                    let all = try await session.allTasks()
                    #expect(all.count == 2)
                    #expect(all.allSatisfy { $0.state == .completed && $0.transfer.sha256 == file.sha256 })
                }
            }
        }
    }

    /// `downloadTask(with:destination:)`: the file lands where the app says, checked against the
    /// checksum it gave; a folder that does not exist is refused before anything is queued.
    @Test func aTaskWithADestinationPutsTheFileThere() async throws {
        let data = Origin.bytes(50_000, seed: 8)
        try await Origin.run { origin, base in
            origin.serve("/song.m4a", .init(data: data))
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let session = try await d.session("app")
                    let destination = home.appendingPathComponent("Music/song-of-mine.m4a")
                    try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                    let checksum = try Checksum(algorithm: .sha1, hex: Digests.hex(data, .sha1))
                    let task = try await session.downloadTask(with: base.appendingPathComponent("song.m4a"), destination: destination, checksum: checksum)
                    let events = try await collect(session) { $0.finished.count == 1 }
                    #expect(events.finished[task.taskIdentifier]?.location == destination)
                    #expect(try Data(contentsOf: destination) == data)
                    let elsewhere = home.appendingPathComponent("nowhere/x.m4a")
                    await #expect(throws: FerryError.self) {
                        try await session.downloadTask(with: base.appendingPathComponent("song.m4a"), destination: elsewhere)
                    }
                    #expect(try await session.allTasks().count == 1)
                }
            }
        }
    }

    @Test func suspendAndResumeContinueFromTheBytesOnDiskWithProgress() async throws {
        let size = 600_000
        let file = Origin.File(data: Origin.bytes(size, seed: 6), bytesPerSecond: 300_000)
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/show.mp3", file)
            origin.script("/show.mp3", [.holdAfter(size / 3, gate)])  // until suspended
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let session = try await d.session("app")
                    let task = try await session.downloadTask(with: base.appendingPathComponent("show.mp3"))
                    try await eventually("a third of the file") {
                        try await task.refresh()
                        return task.countOfBytesReceived >= Int64(size / 3)
                    }
                    #expect(task.state == .running)
                    #expect(task.countOfBytesExpectedToReceive == Int64(size))
                    let fraction = try #require(task.fractionCompleted)
                    #expect(fraction > 0 && fraction < 1)

                    try await task.suspend()
                    #expect(task.state == .paused)
                    gate.open()
                    try await task.resume()
                    #expect([.queued, .running].contains(task.state))

                    let events = try await collect(session) { $0.finished[task.taskIdentifier] != nil }
                    #expect(events.count(of: .didPause) == 1, "\(events.summary)")
                    let progress = events.compactMap(\.written).filter { $0.total == Int64(size) && $0.bytes > 0 }
                    #expect(!progress.isEmpty, "\(events.summary)")
                    let offset = try #require(events.compactMap(\.resumeOffset).first, "\(events.summary)")
                    #expect(offset == Int64(size / 3))
                    #expect(origin.requests(for: "/show.mp3").last?.range == "bytes=\(offset)-")
                    #expect(origin.bytesSentPerRequest("/show.mp3").last == size - Int(offset))
                    #expect(events.finished[task.taskIdentifier]?.sha256 == file.sha256)

                    try await task.refresh()
                    #expect(task.state == .completed)
                    #expect(task.fractionCompleted == 1)
                    #expect(task.transfer.path == events.finished[task.taskIdentifier]?.location.path)
                    let finishedError = await #expect(throws: FerryError.self) { try await task.suspend() }
                    #expect(finishedError?.code == .invalidState)
                }
            }
        }
    }

    @Test func aFailedTaskReportsItsErrorAndCanBeResumed() async throws {
        try await Origin.run { origin, base in
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let session = try await d.session("app")
                    let task = try await session.downloadTask(with: base.appendingPathComponent("later.mp3"))
                    let failed = try await collect(session) { events in events.contains { if case .didFail = $0.kind { true } else { false } } }
                    guard case .didFail(let error) = failed.last?.kind else { throw TestFailure("no failure: \(failed.summary)") }
                    #expect(error.code == .httpStatus)
                    try await task.refresh()
                    #expect(task.state == .failed)
                    #expect(task.error?.code == .httpStatus)

                    origin.serve("/later.mp3", .init(data: Origin.bytes(5_000)))
                    try await task.resume()
                    let events = try await collect(session) { $0.finished[task.taskIdentifier] != nil }
                    #expect(events.finished[task.taskIdentifier]?.sha256 == Origin.bytes(5_000).sha256Hex)
                }
            }
        }
    }

    @Test func aSessionNeedsAValidIdentifierAndADaemon() async throws {
        try await withTemporaryDirectory { home in
            let paths = FerryPaths(library: home.appendingPathComponent("library"), state: home.appendingPathComponent("state"))
            let badName = await #expect(throws: FerryError.self) {
                try await BackgroundSession(identifier: "my app", configuration: .init(paths: paths, launcher: nil))
            }
            #expect(badName?.code == .invalidRequest)
            let noDaemon = await #expect(throws: FerryError.self) {
                try await BackgroundSession(identifier: "app", configuration: .init(paths: paths, launcher: nil))
            }
            #expect(noDaemon?.code == .daemonUnreachable)
        }
    }
}
