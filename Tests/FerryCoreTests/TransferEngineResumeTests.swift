import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Pause and resume against origins with every kind of validator (DESIGN: resume protocol).
@Suite struct TransferEngineResumeTests {
    /// Starts a download that the origin holds at 200,000 bytes, pauses it there (however slow
    /// the machine, never after it ended), lets `between` change the origin, then resumes it to
    /// completion. Every byte progress showed before the pause is in the part file, durable.
    private func pauseAndResume(
        _ file: Origin.File, between: @Sendable (Origin) -> Void = { _ in },
        check: @Sendable (Origin, EngineHarness, Transfer, Int64, Int) async throws -> Void
    ) async throws {
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/file", file)
            origin.script("/file", [.holdAfter(200_000, gate)])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("file"))
                    try await h.wait(t.id, bytes: 200_000)
                    let paused = try await h.engine.pause(t.id)
                    #expect(paused.state == .paused)
                    try await h.waitUntilReleased(t.id)
                    gate.open()
                    #expect(h.partFileExists(t.id))
                    let durable = try await h.journal.transfer(id: t.id)!.durableBytes
                    let onDisk = try FileManager.default.attributesOfItem(atPath: h.library.partURL(for: t.id).path)[.size] as! Int
                    #expect(durable == 200_000)
                    #expect(onDisk == 200_000)
                    between(origin)
                    origin.update("/file") { $0.bytesPerSecond = nil }
                    _ = try await h.engine.resume(t.id)
                    let done = try await h.wait(t.id, for: .completed)
                    // Bytes sent in answer to the requests after the pause (not the first response's tail).
                    let resumedBytes = origin.bytesSentPerRequest("/file").dropFirst().reduce(0, +)
                    try await check(origin, h, done, durable, resumedBytes)
                }
            }
        }
    }

    @Test func resumesWithRangeAndIfRangeOnStrongETag() async throws {
        let file = Origin.File(data: Origin.bytes(1_000_000), etag: "\"abc\"", bytesPerSecond: 1_000_000)
        try await pauseAndResume(file) { origin, h, done, durable, resumedBytes in
            #expect(done.sha256 == file.sha256)
            let second = origin.requests(for: "/file")[1]
            #expect(second.range == "bytes=\(durable)-")
            #expect(second.ifRange == "\"abc\"")
            // Only the remainder was sent after resuming.
            #expect(resumedBytes == 1_000_000 - Int(durable))
            let resumed = try await h.events().first { $0.kind == .resumed }
            #expect(resumed?.offset == durable)
        }
    }

    @Test func fallsBackToLastModifiedWhenTheETagIsWeak() async throws {
        let file = Origin.File(data: Origin.bytes(1_000_000), etag: "W/\"weak\"", lastModified: "Tue, 15 Nov 1994 12:45:26 GMT", bytesPerSecond: 1_000_000)
        try await pauseAndResume(file) { origin, _, done, durable, _ in
            #expect(done.sha256 == file.sha256)
            let second = origin.requests(for: "/file")[1]
            #expect(second.range == "bytes=\(durable)-")
            #expect(second.ifRange == "Tue, 15 Nov 1994 12:45:26 GMT")
        }
    }

    @Test(arguments: [
        (etag: "W/\"weak\"" as String?, lastModified: nil as String?),
        (etag: nil, lastModified: nil),
    ])
    func startsOverWithoutAValidator(etag: String?, lastModified: String?) async throws {
        let file = Origin.File(data: Origin.bytes(1_000_000), etag: etag, lastModified: lastModified, bytesPerSecond: 1_000_000)
        try await pauseAndResume(file) { origin, h, done, _, _ in
            #expect(done.sha256 == file.sha256)
            #expect(origin.requests(for: "/file")[1].range == nil)
            let restarted = try await h.events().first { $0.kind == .restarted }
            #expect(restarted?.reason?.contains("no ETag or Last-Modified") == true)
        }
    }

    @Test func restartsWithTheSameResponseWhenTheFileChanged() async throws {
        let file = Origin.File(data: Origin.bytes(1_000_000), etag: "\"v1\"", bytesPerSecond: 1_000_000)
        let newData = Origin.bytes(900_000, seed: 99)
        try await pauseAndResume(file, between: { origin in
            origin.update("/file") {
                $0.data = newData
                $0.etag = "\"v2\""
            }
        }) { origin, h, done, _, _ in
            #expect(done.sha256 == newData.sha256Hex)
            #expect(done.totalBytes == 900_000)
            // One request after the pause: the 200 answering If-Range was used, not discarded.
            #expect(origin.requests(for: "/file").count == 2)
            let restarted = try await h.events().first { $0.kind == .restarted }
            #expect(restarted?.reason?.contains("changed") == true)
        }
    }

    @Test func restartsWhenTheServerIgnoresRanges() async throws {
        let file = Origin.File(data: Origin.bytes(1_000_000), bytesPerSecond: 1_000_000)
        try await pauseAndResume(file, between: { origin in origin.update("/file") { $0.honorsRanges = false } }) { origin, h, done, _, _ in
            #expect(done.sha256 == file.sha256)
            #expect(origin.requests(for: "/file").count == 2)
            let restarted = try await h.events().first { $0.kind == .restarted }
            #expect(restarted?.reason?.contains("ignored the range") == true)
        }
    }

    @Test func aPartialResponseFromTheWrongOffsetIsDiscarded() async throws {
        let file = Origin.File(data: Origin.bytes(1_000_000), bytesPerSecond: 1_000_000)
        try await pauseAndResume(file, between: { origin in origin.script("/file", [.wrongRangeStart]) }) { origin, h, done, _, _ in
            #expect(done.sha256 == file.sha256)
            let requests = origin.requests(for: "/file")
            #expect(requests.count == 3)
            #expect(requests[2].range == nil)
            let restarted = try await h.events().first { $0.kind == .restarted }
            #expect(restarted?.reason?.contains("when asked for") == true)
        }
    }

    @Test func resumeDataRoundTripsAfterCancelKeepingIt() async throws {
        let file = Origin.File(data: Origin.bytes(1_000_000))
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/file", file)
            origin.script("/file", [.holdAfter(200_000, gate)])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("file"))
                    try await h.wait(t.id, bytes: 200_000)
                    _ = try await h.engine.cancel(t.id, keepingResumeData: true)
                    try await h.waitUntilReleased(t.id)
                    gate.open()
                    let data = try await h.engine.resumeData(for: t.id)
                    let blob = data.encoded()
                    let decoded = try ResumeData(blob: blob)
                    #expect(decoded == data)
                    #expect(decoded.durableBytes == 200_000)
                    #expect(h.partFileExists(t.id))

                    // The wrong session may not use it.
                    await #expect(throws: FerryError.self) { try await h.engine.resume(with: decoded, session: "intruder") }
                    let resumed = try await h.engine.resume(with: decoded, session: "test")
                    #expect(resumed.id == t.id)
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == file.sha256)
                    #expect(origin.requests(for: "/file").last?.range == "bytes=\(decoded.durableBytes)-")
                }
            }
        }
    }

    @Test func resumeDataOfAnOrdinaryCancelIsStale() async throws {
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/file", .init(data: Origin.bytes(1_000_000)))
            origin.script("/file", [.holdAfter(100_000, gate)])
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await h.get(base.appendingPathComponent("file"))
                    try await h.wait(t.id, bytes: 100_000)
                    let data = try await h.engine.resumeData(for: t.id)
                    _ = try await h.engine.cancel(t.id)
                    let error = await #expect(throws: FerryError.self) { try await h.engine.resume(with: data, session: "test") }
                    #expect(error?.code == .resumeDataStale)
                }
            }
        }
    }

    @Test func garbageIsNotResumeData() {
        #expect(throws: FerryError.self) { try ResumeData(blob: Data("hello".utf8)) }
        var future = ResumeData(transferId: 1, session: "s", url: "http://x/", durableBytes: 1, totalBytes: nil, validator: nil)
        future.version = 99
        let error = #expect(throws: FerryError.self) { try ResumeData(blob: future.encoded()) }
        #expect(error?.message.contains("version 99") == true)
    }
}
