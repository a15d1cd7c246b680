import FerryKit
import FerryTestSupport
import Synchronization
import Testing

@testable import FerryURLSession

/// A background configuration's download tasks run in a real Ferry daemon: made paused with the
/// transfer's id as their identifier, started by resume(), ended while the program is gone and
/// delivered to the next run's delegate, paused with the daemon's resume data. Making, resuming
/// and cancelling a background task wait on the calling thread for the daemon, which here runs in
/// this process on Swift's cooperative threads: the tests call them from a Dispatch thread
/// (``offPool(_:)``), as an app calls them from its main thread, and one at a time.
@Suite(.serialized) struct BackgroundSessionTests {
    static func configuration(_ d: DaemonHarness, _ identifier: String = "com.xxxx.HalfTunes.bgSession") -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
        configuration.ferryDaemon = BackgroundSession.Configuration(paths: d.paths, launcher: nil)
        configuration.sessionSendsLaunchEvents = false
        return configuration
    }

    static func session(_ d: DaemonHarness, _ recorder: Recorder) -> URLSession {
        let session = URLSession(configuration: configuration(d), delegate: recorder, delegateQueue: nil)
        recorder.session = session
        return session
    }

    @Test func aTaskIsTheDaemonsTransferMadePausedAndResumeStartsIt() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                try await Origin.run { origin, base in
                    let bytes = Origin.bytes(2 << 20, seed: 5)
                    origin.serve("/preview.m4a", .init(data: bytes))
                    let recorder = Recorder()
                    let session = Self.session(d, recorder)
                    let task = await offPool { session.downloadTask(with: base.appendingPathComponent("preview.m4a")) }
                    let transfer = try await d.client.transfer(Int64(task.taskIdentifier))
                    #expect(transfer.session == "com.xxxx.HalfTunes.bgSession")
                    #expect(transfer.state == .paused, "made suspended")
                    #expect(origin.requests.isEmpty)
                    await offPool { task.resume() }
                    await recorder.end(of: task)
                    let calls = recorder.calls(task)
                    #expect(calls.map(\.name).filter { $0 != "didWriteData" } == ["didCreateTask", "didFinishDownloading", "didComplete"])
                    #expect(calls.last?.error == nil)
                    #expect(calls.allSatisfy { $0.onDelegateQueue })
                    #expect(recorder.files.withLock { $0[task.taskIdentifier] } == bytes)
                    #expect(!FileManager.default.fileExists(atPath: try #require(recorder.location).path), "removed when the call returned")
                    #expect((task.response as? HTTPURLResponse)?.statusCode == 200)
                    #expect(task.countOfBytesReceived == Int64(bytes.count))
                }
            }
        }
    }

    @Test func aDownloadThatEndsWhileTheProgramIsGoneReachesTheNextRunOnce() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                try await Origin.run { origin, base in
                    let bytes = Origin.bytes(1 << 20, seed: 6)
                    let held = Origin.Gate()
                    origin.serve("/episode.mp3", .init(data: bytes))
                    origin.script("/episode.mp3", [.holdAfter(128 << 10, held)])
                    let first = Recorder()
                    let run1 = Self.session(d, first)
                    let task = await offPool { run1.downloadTask(with: base.appendingPathComponent("episode.mp3")) }
                    await offPool { task.resume() }
                    let id = Int64(task.taskIdentifier)
                    try await eventually("128 KiB at the daemon") { try await d.client.transfer(id).bytesReceived >= 128 << 10 }
                    run1.background?.detach()  // the program exits: its tasks go on in the daemon
                    held.open()
                    try await eventually("the transfer to complete") { try await d.client.transfer(id).state == .completed }

                    let second = Recorder()
                    let run2 = Self.session(d, second)
                    try await second.waitFor("didFinishEvents")
                    let names = second.calls.withLock { $0.map(\.name) }
                    #expect(names == ["didFinishDownloading", "didComplete", "didFinishEvents"])
                    #expect(second.calls.withLock { $0[0].task } == task.taskIdentifier, "the identifier of the first run")
                    #expect(second.files.withLock { $0[task.taskIdentifier] } == bytes)
                    #expect(!first.names(task).contains("didComplete"))
                    _ = run2

                    // Acknowledged: the next run has nothing to replay.
                    let third = try await BackgroundSession(identifier: "com.xxxx.HalfTunes.bgSession", configuration: .init(paths: d.paths, launcher: nil))
                    #expect(try await third.missedEvents().isEmpty)
                }
            }
        }
    }

    @Test func pausedWithTheDaemonsResumeDataItGoesOnWithTheSameIdentifier() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                try await Origin.run { origin, base in
                    let bytes = Origin.bytes(1 << 20, seed: 8)
                    let held = Origin.Gate()
                    origin.serve("/a.mp3", .init(data: bytes))
                    origin.script("/a.mp3", [.holdAfter(256 << 10, held)])
                    let recorder = Recorder()
                    let session = Self.session(d, recorder)
                    let task = await offPool { session.downloadTask(with: base.appendingPathComponent("a.mp3")) }
                    task.taskDescription = "a.mp3, first try"
                    await offPool { task.resume() }
                    try await eventually("256 KiB at the daemon") { try await d.client.transfer(Int64(task.taskIdentifier)).bytesReceived >= 256 << 10 }
                    // The label is the daemon's: set before resume() it went with the start, after it on its own.
                    #expect(try await d.client.transfer(Int64(task.taskIdentifier)).taskDescription == "a.mp3, first try")
                    await offPool { task.taskDescription = "a.mp3" }
                    #expect(try await d.client.transfer(Int64(task.taskIdentifier)).taskDescription == "a.mp3")
                    let blob = await cancelledForResumeData { task.cancel(byProducingResumeData: $0) }
                    await recorder.end(of: task)
                    held.open()
                    let data = try #require(blob)
                    #expect(recorder.calls(task).last?.error?.code == .cancelled)
                    #expect(recorder.calls(task).last?.error?.downloadTaskResumeData == data)

                    let resumed = await offPool { session.downloadTask(withResumeData: data) }
                    #expect(resumed.taskIdentifier == task.taskIdentifier, "the same task, as the daemon keeps it")
                    await offPool { resumed.resume() }
                    try await eventually("the resumed download's file") { recorder.calls(resumed).contains { $0.name == "didFinishDownloading" } }
                    let offset = try #require(recorder.calls(resumed).first { $0.name == "didResumeAtOffset" }?.numbers.first)
                    #expect(offset >= 256 << 10)
                    #expect(recorder.files.withLock { $0[resumed.taskIdentifier] } == bytes)
                    #expect(origin.requests(for: "/a.mp3").last?.range?.hasPrefix("bytes=") == true)

                    let garbage = await offPool { session.downloadTask(withResumeData: Data("nope".utf8)) }
                    await offPool { garbage.resume() }
                    await recorder.end(of: garbage)
                    #expect(recorder.calls(garbage).last?.error?.code == .cannotWriteToFile)
                }
            }
        }
    }
}

extension BackgroundSessionTests {
    /// Resume data of one daemon given to another (a program moved to another machine, or a
    /// FERRY_HOME changed): the other daemon's transfer with that number is another download, so
    /// the task fails as iOS fails unusable resume data, and the first daemon can still go on.
    @Test func resumeDataFromAnotherDaemonFailsAndTheFirstStillGoesOn() async throws {
        try await withTemporaryDirectory { home in
            try await Origin.run { origin, base in
                let bytes = Origin.bytes(1 << 20, seed: 14)
                let held = Origin.Gate()
                origin.serve("/a.mp3", .init(data: bytes))
                origin.serve("/b.mp3", .init(data: Origin.bytes(64 << 10, seed: 15)))
                origin.script("/a.mp3", [.holdAfter(256 << 10, held)])
                let made: Data = try await DaemonHarness.run(home: home.appendingPathComponent("first")) { d in
                    let recorder = Recorder()
                    let session = Self.session(d, recorder)
                    let task = await offPool { session.downloadTask(with: base.appendingPathComponent("a.mp3")) }
                    await offPool { task.resume() }
                    try await eventually("256 KiB at the first daemon") { try await d.client.transfer(Int64(task.taskIdentifier)).bytesReceived >= 256 << 10 }
                    let blob = await cancelledForResumeData { task.cancel(byProducingResumeData: $0) }
                    await recorder.end(of: task)
                    return try #require(blob)
                }
                held.open()
                try await DaemonHarness.run(home: home.appendingPathComponent("second")) { d in
                    let recorder = Recorder()
                    let session = Self.session(d, recorder)
                    // The second daemon's first transfer, in the same session: another file.
                    let own = await offPool { session.downloadTask(with: base.appendingPathComponent("b.mp3")) }
                    await offPool { own.resume() }
                    await recorder.end(of: own)
                    let foreign = await offPool { session.downloadTask(withResumeData: made) }
                    await offPool { foreign.resume() }
                    try await eventually("the foreign task's end") { recorder.names(foreign).filter { $0 == "didComplete" }.count == (foreign.taskIdentifier == own.taskIdentifier ? 2 : 1) }
                    #expect(recorder.calls(foreign).last?.error?.code == .cannotWriteToFile)
                    // Same number, another transfer: only the second daemon's own file was handed over.
                    let shared = foreign.taskIdentifier == own.taskIdentifier
                    #expect(recorder.names(foreign).filter { $0 == "didFinishDownloading" }.count == (shared ? 1 : 0))
                    #expect(origin.requests(for: "/a.mp3").count == 1, "the second daemon asked nothing of the first's file")
                }
                // Nothing lost: the first daemon goes on from its bytes.
                try await DaemonHarness.run(home: home.appendingPathComponent("first")) { d in
                    let recorder = Recorder()
                    let session = Self.session(d, recorder)
                    let resumed = await offPool { session.downloadTask(withResumeData: made) }
                    await offPool { resumed.resume() }
                    try await eventually("the resumed download's file") { recorder.calls(resumed).contains { $0.name == "didFinishDownloading" } }
                    #expect(recorder.files.withLock { $0[resumed.taskIdentifier] } == bytes)
                    #expect(origin.requests(for: "/a.mp3").last?.range?.hasPrefix("bytes=") == true)
                }
            }
        }
    }

    @Test func aTaskCancelledFromOutsideTheProgramEndsCancelled() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                try await Origin.run { origin, base in
                    let held = Origin.Gate()
                    origin.serve("/b.mp3", .init(data: Origin.bytes(512 << 10)))
                    origin.script("/b.mp3", [.holdAfter(64 << 10, held)])
                    let recorder = Recorder()
                    let session = Self.session(d, recorder)
                    let task = await offPool { session.downloadTask(with: base.appendingPathComponent("b.mp3")) }
                    await offPool { task.resume() }
                    try await eventually("64 KiB at the daemon") { try await d.client.transfer(Int64(task.taskIdentifier)).bytesReceived >= 64 << 10 }
                    _ = try await d.client.cancel(Int64(task.taskIdentifier))  // `ferry cancel ID`
                    await recorder.end(of: task)
                    held.open()
                    #expect(recorder.calls(task).last?.error?.code == .cancelled)
                    #expect(task.state == .completed)
                }
            }
        }
    }
}

extension BackgroundSessionTests {
    @Test func aBackgroundUploadIsSentByTheDaemonWithProgressAndTheServersAnswer() async throws {
        let data = Origin.bytes(400_000, seed: 12)
        try await UploadReceiver.run { receiver, base in
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let file = home.appendingPathComponent("clip.m4a")
                    try data.write(to: file)
                    let recorder = Recorder()
                    let session = Self.session(d, recorder)
                    var request = URLRequest(url: base.appendingPathComponent("tus"))
                    request.httpMethod = "POST"
                    let task = await offPool { session.uploadTask(with: request, fromFile: file) }
                    let transfer = try await d.client.transfer(Int64(task.taskIdentifier))
                    #expect(transfer.kind == .upload && transfer.state == .paused)
                    await offPool { task.resume() }
                    await recorder.end(of: task)
                    #expect(recorder.calls(task).last?.error == nil)
                    #expect(receiver.completed.first?.body == data)
                    #expect((task.response as? HTTPURLResponse)?.statusCode == 204)
                    // The daemon's progress as didSendBodyData: totals that grow to the file's size.
                    let sends = recorder.calls(task).filter { $0.name == "didSendBodyData" }
                    #expect(!sends.isEmpty)
                    #expect(sends.map { $0.numbers[1] } == sends.map { $0.numbers[1] }.sorted())
                    #expect(sends.map { $0.numbers[0] }.reduce(0, +) == sends.last?.numbers[1])
                    #expect(sends.last?.numbers[1] == Int64(data.count), "the last says all of it")
                    #expect(task.countOfBytesSent == Int64(data.count))
                    #expect(sends.allSatisfy { $0.onDelegateQueue })
                    #expect(FileManager.default.fileExists(atPath: file.path), "the user's file stays")
                    let missing = await offPool { session.uploadTask(with: request, fromFile: home.appendingPathComponent("nope")) }
                    await offPool { missing.resume() }
                    await recorder.end(of: missing)
                    #expect(recorder.calls(missing).last?.error?.code == .fileDoesNotExist)
                }
            }
        }
    }
}

extension BackgroundSessionTests {
    /// iOS 17's resumable uploads: the server took the upload as an IETF resumable one, so the
    /// cancelled task's resume data lets a new task send only what the server lacks.
    @Test func aCancelledUploadGoesOnFromTheServersOffsetWithItsResumeData() async throws {
        let data = Origin.bytes(600_000, seed: 13)
        try await UploadReceiver.run { receiver, base in
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let file = home.appendingPathComponent("episode.m4a")
                    try data.write(to: file)
                    let recorder = Recorder()
                    let session = Self.session(d, recorder)
                    var request = URLRequest(url: base.appendingPathComponent("ietf"))
                    request.httpMethod = "POST"
                    let held = Origin.Gate()
                    receiver.holdNextBody(after: 200_000, until: held)
                    let task = await offPool { session.uploadTask(with: request, fromFile: file) }
                    await offPool { task.resume() }
                    try await eventually("the server to hold 200,000 bytes") { receiver.bytesReceived >= 200_000 }
                    let blob = await cancelledForResumeData { task.cancel(byProducingResumeData: $0) }
                    await recorder.end(of: task)
                    held.open()
                    let resumeData = try #require(blob, "the server took a resumable upload")
                    let cancelled = try #require(recorder.calls(task).last?.error)
                    #expect(cancelled.code == .cancelled)
                    #expect(cancelled.uploadTaskResumeData == resumeData)
                    #expect(cancelled.downloadTaskResumeData == nil, "an upload's resume data has its own key")
                    #expect(receiver.completed.isEmpty)

                    let resumed = await offPool { session.uploadTask(withResumeData: resumeData) }
                    #expect(resumed.taskIdentifier == task.taskIdentifier, "the same transfer goes on")
                    await offPool { resumed.resume() }
                    try await eventually("the upload to complete") { receiver.completed.count == 1 }
                    #expect(receiver.completed.first?.body == data)
                    #expect(receiver.bytesReceived == data.count, "no byte sent twice: it asked the server's offset")
                    #expect(receiver.requests.contains { $0.method == "HEAD" })
                    // The same identifier's second didComplete.
                    try await eventually("the resumed task's end") { recorder.names(resumed).filter { $0 == "didComplete" }.count == 2 }
                    #expect(recorder.calls(resumed).last?.error == nil)
                    #expect((resumed.response as? HTTPURLResponse)?.statusCode == 200, "the IETF append's answer")

                    // A plain upload cannot go on: no resume data, as Apple gives none.
                    let plain = await offPool { session.uploadTask(with: URLRequest(url: base.appendingPathComponent("plain/p")), fromFile: file) }
                    let secondHold = Origin.Gate()
                    receiver.holdNextBody(after: 100_000, until: secondHold)
                    await offPool { plain.resume() }
                    try await eventually("the plain upload under way") { receiver.bytesReceived >= data.count + 100_000 }
                    let none = await cancelledForResumeData { plain.cancel(byProducingResumeData: $0) }
                    secondHold.open()
                    #expect(none == nil)

                    // Data that is not an upload's of this session fails as a download's does.
                    for garbage in [Data("nope".utf8), resumeData] {
                        let other = URLSession(configuration: Self.configuration(d, "another"), delegate: recorder, delegateQueue: nil)
                        let bad = await offPool { (garbage == resumeData ? other : session).uploadTask(withResumeData: garbage) }
                        await offPool { bad.resume() }
                        await recorder.end(of: bad)
                        #expect(recorder.calls(bad).last?.error?.code == .cannotWriteToFile)
                    }
                }
            }
        }
    }

    @Test func theConfigurationsConstraintsBecomeTheDaemonSessions() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let configuration = Self.configuration(d, "constrained")
                configuration.allowsExpensiveNetworkAccess = false
                configuration.isDiscretionary = true
                let session = URLSession(configuration: configuration, delegate: nil, delegateQueue: nil)
                _ = session.downloadTask(with: URL(string: "http://127.0.0.1:9/never")!)  // waits for the daemon
                let options = try await d.client.sessionConfiguration("constrained").options
                #expect(options.allowsMeteredNetwork == false)
                #expect(options.discretionary == true)
                // The next run's configuration says otherwise: the session follows it.
                let relaxed = URLSession(configuration: Self.configuration(d, "constrained"), delegate: nil, delegateQueue: nil)
                _ = await offPool { relaxed.downloadTask(with: URL(string: "http://127.0.0.1:9/never")!) }
                let after = try await d.client.sessionConfiguration("constrained").options
                #expect(after.allowsMeteredNetwork == nil && after.discretionary == nil)
            }
        }
    }
}

extension BackgroundSessionTests {
    @Test func aBackgroundTaskStartsNoEarlierThanItsEarliestBeginDate() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                try await Origin.run { origin, base in
                    origin.serve("/later.mp3", .init(data: Origin.bytes(64 << 10)))
                    let recorder = Recorder()
                    let session = Self.session(d, recorder)
                    let task = await offPool { session.downloadTask(with: base.appendingPathComponent("later.mp3")) }
                    let begin = Date().addingTimeInterval(1.5)
                    task.earliestBeginDate = begin
                    await offPool { task.resume() }
                    let queued = try await d.client.transfer(Int64(task.taskIdentifier))
                    #expect(queued.state == .queued)
                    #expect(queued.startAfter == Date(timeIntervalSince1970: begin.timeIntervalSince1970.rounded(.up)), "whole seconds, never before")
                    await recorder.end(of: task)
                    #expect(recorder.calls(task).last?.error == nil)
                    let asked = try #require(origin.requests(for: "/later.mp3").first?.date)
                    #expect(asked >= begin, "not before its date")
                }
            }
        }
    }
}
