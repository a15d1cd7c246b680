import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Uploads against a real loopback receiver: plain PUT and multipart POST, tus and the IETF
/// resumable-upload protocol failing part-way, a file that changes or vanishes, a refusal. In
/// every success the server ends with exactly the file's bytes, once.
@Suite struct UploadTests {
    static let data = Origin.bytes(1_000_000, seed: 42)

    /// Writes the test file into `home` and returns its path.
    static func file(in home: URL, name: String = "episode.mp3") throws -> String {
        let url = home.appendingPathComponent(name)
        try data.write(to: url)
        return url.path
    }

    static func upload(
        _ h: EngineHarness, _ path: String, to url: URL, method: String? = nil, form: String? = nil,
        options: TransferOptions? = nil
    ) async throws -> Transfer {
        try await h.engine.upload(
            CreateUploadRequest(file: path, url: url.absoluteString, method: method, formField: form, options: options), session: "test"
        )
    }

    @Test func aPlainPutSendsTheFileAndKeepsTheServersAnswer() async throws {
        try await UploadReceiver.run { receiver, base in
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await Self.upload(h, try Self.file(in: home), to: base.appendingPathComponent("plain/episode.mp3"))
                    #expect(t.kind == .upload)
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(receiver.completed.count == 1)
                    #expect(receiver.completed.first?.method == "PUT")
                    #expect(receiver.completed.first?.body == Self.data)
                    #expect(receiver.completed.first?.headers["content-type"] == "audio/mpeg")
                    #expect(done.sha256 == Origin.sha256(Self.data))
                    #expect(done.bytesReceived == Int64(Self.data.count))
                    #expect(done.response?.status == 201)
                    #expect(done.response?.headers["Location"] == "/files/1")
                    #expect(done.response?.body?.contains(Origin.sha256(Self.data)) == true)
                    #expect(done.uploadProtocol == .plain, "OPTIONS showed no resumable protocol")
                }
            }
        }
    }

    @Test func aFormPostCarriesTheFileInItsField() async throws {
        try await UploadReceiver.run { receiver, base in
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await Self.upload(h, try Self.file(in: home), to: base.appendingPathComponent("plain/form"), method: "POST", form: "media")
                    _ = try await h.wait(t.id, for: .completed)
                    let received = try #require(receiver.completed.first)
                    #expect(received.method == "POST")
                    let type = try #require(received.headers["content-type"])
                    #expect(type.hasPrefix("multipart/form-data; boundary="))
                    let boundary = String(type.dropFirst("multipart/form-data; boundary=".count))
                    let preamble = Data(
                        ("--\(boundary)\r\nContent-Disposition: form-data; name=\"media\"; filename=\"episode.mp3\"\r\n"
                            + "Content-Type: audio/mpeg\r\n\r\n").utf8
                    )
                    #expect(received.body == preamble + Self.data + Data("\r\n--\(boundary)--\r\n".utf8))
                }
            }
        }
    }

    @Test func aPlainUploadThatFailsPartWayStartsOverAndArrivesOnce() async throws {
        try await UploadReceiver.run { receiver, base in
            receiver.failNextBody(after: 300_000)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await Self.upload(h, try Self.file(in: home), to: base.appendingPathComponent("plain/f"))
                    _ = try await h.wait(t.id, for: .completed)
                    #expect(receiver.completed.count == 1)
                    #expect(receiver.completed.first?.body == Self.data)
                    #expect(receiver.requests.filter { $0.method == "PUT" }.count == 2)
                    #expect(try await h.events().contains { $0.kind == .waiting })
                }
            }
        }
    }

    @Test(arguments: ["tus", "ietf"])
    func aResumableUploadContinuesFromTheServersOffset(_ path: String) async throws {
        try await UploadReceiver.run { receiver, base in
            receiver.failNextBody(after: 300_000)
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await Self.upload(h, try Self.file(in: home), to: base.appendingPathComponent(path))
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.uploadProtocol?.rawValue == path, "found by OPTIONS")
                    #expect(receiver.completed.count == 1)
                    #expect(receiver.completed.first?.body == Self.data)
                    // Only the missing bytes were sent again, after asking the server where it stands.
                    #expect(receiver.bytesReceived == Self.data.count)
                    let patches = receiver.requests.enumerated().filter { $0.element.method == "PATCH" }
                    #expect(patches.count == 2)
                    #expect(patches.last.map { receiver.requestHeaders[$0.offset]["upload-offset"] } == "300000")
                    #expect(receiver.requests.contains { $0.method == "HEAD" })
                    let resumed = try await h.events().first { $0.kind == .resumed }
                    #expect(resumed?.offset == 300_000)
                }
            }
        }
    }

    /// The receiver holds each upload's body part-way until the test has paused or cancelled it.
    @Test func pauseResumeAndCancelAnUpload() async throws {
        let (gate, secondGate) = (Origin.Gate(), Origin.Gate())
        try await UploadReceiver.run { receiver, base in
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    receiver.holdNextBody(after: 200_000, until: gate)
                    let t = try await Self.upload(h, try Self.file(in: home), to: base.appendingPathComponent("tus"))
                    try await eventually("some bytes at the server") { receiver.bytesReceived >= 200_000 }
                    #expect(try await h.engine.pause(t.id).state == .paused)
                    try await h.waitUntilReleased(t.id)
                    gate.open()
                    let atPause = receiver.bytesReceived
                    #expect(atPause == 200_000)
                    _ = try await h.engine.resume(t.id)
                    _ = try await h.wait(t.id, for: .completed)
                    #expect(receiver.completed.count == 1)
                    #expect(receiver.completed.first?.body == Self.data)
                    // The resume asks the server where it stands and sends no byte twice.
                    let resumed = try await h.events().first { $0.kind == .resumed }
                    #expect(resumed?.offset == Int64(atPause), "continued from what the server had")
                    #expect(receiver.bytesReceived == Self.data.count, "no byte sent twice")

                    receiver.holdNextBody(after: 100_000, until: secondGate)
                    let second = try await Self.upload(h, try Self.file(in: home, name: "b.mp3"), to: base.appendingPathComponent("plain/b"))
                    try await eventually("the second upload under way") { receiver.bytesReceived >= Self.data.count + 100_000 }
                    #expect(try await h.engine.cancel(second.id).state == .cancelled)
                    try await h.waitUntilReleased(second.id)
                    secondGate.open()
                    #expect(receiver.completed.count == 1, "a cancelled plain upload never completes at the server")
                }
            }
        }
    }

    /// An attempt whose last bytes reached the server but whose answer was lost: the next one
    /// asks the offset, finds the upload whole, and is done without another (empty) append.
    @Test(arguments: ["tus", "ietf"])
    func anUploadTheServerAlreadyHasWholeIsNotCompletedTwice(path: String) async throws {
        try await UploadReceiver.run { receiver, base in
            try await withTemporaryDirectory { home in
                let id = try await EngineHarness.run(home: home) { h in
                    let t = try await Self.upload(h, try Self.file(in: home), to: base.appendingPathComponent(path))
                    _ = try await h.wait(t.id, for: .completed)
                    return t.id
                }
                #expect(receiver.completed.count == 1)
                // As if the answer had been lost: the journal says it is still to be sent.
                let journal = try SQLiteJournal.open(at: home.appendingPathComponent("state/journal.sqlite"), tables: [.listening, .aria2])
                try await journal.update(id: id) { record in
                    record.state = .paused
                    return nil
                }
                try await EngineHarness.run(home: home) { h in
                    _ = try await h.engine.resume(id)
                    _ = try await h.wait(id, for: .completed)
                }
                #expect(receiver.completed.count == 1, "completed once at the server")
                #expect(receiver.requests.last?.method == "HEAD", "it asked, and sent nothing more")
            }
        }
    }

    @Test(arguments: [true, false])
    func aFileThatChangesOrVanishesBeforeItIsSentFailsClearly(vanishes: Bool) async throws {
        try await UploadReceiver.run { receiver, base in
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let path = try Self.file(in: home)
                    let later = TransferOptions(startAfter: Date().addingTimeInterval(1))
                    let t = try await Self.upload(h, path, to: base.appendingPathComponent("plain/f"), options: later)
                    if vanishes {
                        try FileManager.default.removeItem(atPath: path)
                    } else {
                        try (Self.data + Data("more".utf8)).write(to: URL(fileURLWithPath: path))
                    }
                    let failed = try await h.wait(t.id, for: .failed)
                    #expect(failed.error?.code == "source_changed")
                    #expect(failed.error?.message.contains(path) == true)
                    #expect(receiver.completed.isEmpty)
                }
            }
        }
    }

    @Test func aRefusalFailsWithTheServersAnswerKept() async throws {
        try await UploadReceiver.run { receiver, base in
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let t = try await Self.upload(h, try Self.file(in: home), to: base.appendingPathComponent("nowhere"))
                    let failed = try await h.wait(t.id, for: .failed)
                    #expect(failed.error?.code == "http_status")
                    #expect(failed.response?.status == 404)
                    #expect(receiver.completed.isEmpty)
                }
            }
        }
    }

    @Test func badRequestsAreRefusedBeforeAnythingIsJournaled() async throws {
        try await withTemporaryDirectory { home in
            try await EngineHarness.run(home: home) { h in
                let path = try Self.file(in: home)
                let cases: [(CreateUploadRequest, String)] = [
                    (.init(file: "relative.mp3", url: "http://127.0.0.1:9/x"), "invalid_request"),
                    (.init(file: home.appendingPathComponent("missing").path, url: "http://127.0.0.1:9/x"), "invalid_request"),
                    (.init(file: home.path, url: "http://127.0.0.1:9/x"), "invalid_request"),
                    (.init(file: path, url: "ftp://127.0.0.1/x"), "unsupported_scheme"),
                    (.init(file: path, url: "http://127.0.0.1:9/x", method: "DELETE"), "invalid_request"),
                    (.init(file: path, url: "http://127.0.0.1:9/x", formField: "f", uploadProtocol: .tus), "invalid_request"),
                ]
                for (request, code) in cases {
                    do {
                        _ = try await h.engine.upload(request, session: "test")
                        Issue.record("accepted \(request.file) \(request.url)")
                    } catch let error as FerryError {
                        #expect(error.code.rawValue == code, "\(request.file) \(request.url): \(error.message)")
                    }
                }
                #expect(try await h.engine.list().transfers.isEmpty)
            }
        }
    }

    /// A receiver that asks who the user is: the discovery's OPTIONS pays the one 401, then every
    /// request (the PUT, or tus's POST, HEAD and PATCH) carries Digest signed with its own
    /// method, and the file arrives once; a wrong password fails clearly.
    @Test(arguments: ["plain/episode.mp3", "tus", "ietf"])
    func anUploadAnswersTheServersChallenge(_ path: String) async throws {
        try await UploadReceiver.run { receiver, base in
            receiver.protect(OriginLogin([.digestSHA256], user: "ann", password: "up-secret"))
            try await withTemporaryDirectory { home in
                try await EngineHarness.run(home: home) { h in
                    let file = try Self.file(in: home)
                    let t = try await Self.upload(h, file, to: base.appendingPathComponent(path), options: TransferOptions(user: "ann", password: "up-secret"))
                    let done = try await h.wait(t.id, for: .completed)
                    #expect(done.sha256 == Origin.sha256(Self.data))
                    #expect(receiver.completed.count == 1 && receiver.completed.first?.body == Self.data)
                    #expect(receiver.challenges == 1, "only the OPTIONS was refused")
                    let answered = receiver.requestHeaders.dropFirst()
                    #expect(answered.allSatisfy { $0["authorization"]?.contains("algorithm=SHA-256") == true })
                    #expect(receiver.bytesReceived == Self.data.count, "the file went once")

                    let wrong = try await h.engine.upload(
                        CreateUploadRequest(file: file, url: base.appendingPathComponent(path).absoluteString, options: TransferOptions(user: "ann", password: "nope")),
                        session: "other"
                    )
                    try await eventually("the wrong password to fail") { try await h.engine.transfer(wrong.id).state.isFinal }
                    let failed = try await h.engine.transfer(wrong.id)
                    #expect(failed.state == .failed)
                    #expect(failed.error?.message.contains("refused the user ann's password") == true, "\(failed.error?.message ?? "")")
                }
            }
        }
    }
}
