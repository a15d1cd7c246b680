import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// The transfer endpoints through FerryKit's client and raw requests.
@Suite struct TransferAPITests {
    @Test(arguments: [
        ("not a url", "invalid_url"),
        ("htp:/broken", "unsupported_scheme"),
        ("ftp://127.0.0.1/file", "unsupported_scheme"),
        ("file:///etc/passwd", "unsupported_scheme"),
        ("javascript:alert(1)", "unsupported_scheme"),
        ("http://", "invalid_url"),
        ("http://exa mple.com/x", "invalid_url"),
        ("", "invalid_url"),
    ])
    func badURLsAreRefusedAndNothingIsJournaled(url: String, code: String) async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let error = await #expect(throws: FerryError.self) {
                    try await d.client.createTransfers(.init(urls: ["http://127.0.0.1:9/fine", url]))
                }
                #expect(error?.code.rawValue == code)
                #expect(error?.message.isEmpty == false)
                let got1 = try await d.client.transfers().transfers
                #expect(got1.isEmpty)
            }
        }
    }

    @Test(arguments: [
        ("{", "not valid"),
        (#"{"urls": "http://x"}"#, "urls"),
        (#"{"urls": []}"#, "at least one URL"),
        (#"{"urls": ["http://127.0.0.1/"], "session": "no spaces allowed"}"#, "session"),
        (#"{"resumeData": "%%%"}"#, "base64"),
        (#"{"resumeData": "aGVsbG8="}"#, "not Ferry resume data"),
        (#"{"urls": ["http://127.0.0.1/a", "http://127.0.0.1/b"], "mirrors": ["http://127.0.0.1/c"]}"#, "one URL"),
        (#"{"urls": ["http://127.0.0.1/a"], "mirrors": ["ftp://127.0.0.1/c"]}"#, "ftp"),
        (#"{"urls": ["http://127.0.0.1/a"], "mirrors": "http://127.0.0.1/c"}"#, "mirrors"),
        (#"{"urls": ["http://127.0.0.1/a"], "directory": "relative"}"#, "absolute"),
        (#"{"urls": ["http://127.0.0.1/a"], "directory": "/nonexistent-ferry-dir"}"#, "does not exist"),
        (#"{"urls": ["http://127.0.0.1/a"], "filename": "../escape"}"#, "not a file name"),
        (#"{"urls": ["http://127.0.0.1/a", "http://127.0.0.1/b"], "filename": "x"}"#, "one URL"),
        (#"{"urls": ["http://127.0.0.1/a"], "checksum": "sha-256=zz"}"#, "64 hex digits"),
        (#"{"urls": ["http://127.0.0.1/a"], "checksum": "crc32=00"}"#, "not a checksum algorithm"),
    ])
    func malformedBodiesGetAClear400(body: String, mentions: String) async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let response = try await d.raw(.POST, "/v1/transfers", headers: [("Content-Type", "application/json")], body: body)
                #expect(response.status == 400)
                let error = try FerryJSON.decoder().decode(ErrorResponse.self, from: Data(response.body.utf8))
                #expect(error.error.message.contains(mentions), "\(error.error.message)")
            }
        }
    }

    /// Mirrors are kept with the transfer and shown in its JSON; none of a refused request is.
    @Test func mirrorsAreKeptAndShown() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let body = #"{"urls": ["http://127.0.0.1:9/a"], "mirrors": ["http://127.0.0.1:9/b"], "options": {"startAfter": "2999-01-01T00:00:00Z"}}"#
                let created = try await d.raw(.POST, "/v1/transfers", headers: [("Content-Type", "application/json")], body: body)
                #expect(created.status == 201)
                #expect(created.body.contains(#""mirrors":[{"url":"http:\/\/127.0.0.1:9\/b"}]"#) || created.body.contains(#""mirrors":[{"url":"http://127.0.0.1:9/b"}]"#), "\(created.body)")
                let listed = try await d.client.transfers().transfers
                #expect(listed.map(\.mirrors) == [[TransferMirror(url: "http://127.0.0.1:9/b")]])
            }
        }
    }

    /// `Prefer: return=minimal`: ids and states in the URLs' order, the same transfers the full
    /// answer would name; a URL already asked for answers its existing id; a bad URL still
    /// refuses the lot.
    @Test func aMinimalAnswerNamesTheTransfersByID() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let urls = (1...5).map { "http://127.0.0.1:9/\($0)" }
                let later = TransferOptions(startAfter: .distantFuture)
                let first = try await d.client.createTransferIDs(.init(urls: Array(urls.prefix(3)), options: later))
                let listed = try await d.client.transfers().transfers
                #expect(first.ids == listed.map(\.id) && first.ids.count == 3)
                #expect(first.states == listed.map(\.state))
                let again = try await d.client.createTransferIDs(.init(urls: urls, options: later))
                #expect(Array(again.ids.prefix(3)) == first.ids, "the URLs already asked for answer their transfers")
                #expect(try await d.client.transfers().transfers.map(\.id) == again.ids)
                #expect(again.lastEventSeq >= first.lastEventSeq)

                let body = #"{"urls": ["http://127.0.0.1:9/6"], "options": {"startAfter": "2100-01-01T00:00:00Z"}}"#
                let raw = try await d.raw(.POST, "/v1/transfers", headers: [("Prefer", "return=minimal"), ("Content-Type", "application/json")], body: body)
                #expect(raw.status == 201 && raw.headers.first(name: "Preference-Applied") == "return=minimal")
                let decoded = try FerryJSON.decoder().decode(CreatedTransferIDs.self, from: Data(raw.body.utf8))
                #expect(decoded.ids.count == 1 && decoded.states == [.queued])
                await #expect(throws: FerryError.self) { try await d.client.createTransferIDs(.init(urls: ["http://127.0.0.1:9/7", "not a url"])) }
                #expect(try await d.client.transfers().transfers.count == 6, "nothing of a refused request")
            }
        }
    }

    @Test func pagesAndTheirErrors() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                _ = try await d.client.createTransfers(.init(urls: (1...3).map { "http://127.0.0.1:9/\($0)" }, options: .init(startAfter: .distantFuture)))
                let first = try await d.client.transfers(limit: 2)
                #expect(first.transfers.count == 2 && first.nextCursor != nil)
                let rest = try await d.client.transfers(limit: 2, cursor: first.nextCursor)
                #expect(rest.transfers.count == 1 && rest.nextCursor == nil)
                for query in ["limit=0", "limit=10001", "limit=x", "cursor=-1", "order=up"] {
                    let response = try await d.raw(.GET, "/v1/transfers?\(query)")
                    #expect(response.status == 400, "\(query)")
                }
            }
        }
    }

    @Test func badIdsAndStates() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let got2 = try await d.raw(.GET, "/v1/transfers/abc").status
                #expect(got2 == 400)
                let got3 = try await d.raw(.GET, "/v1/transfers/-3").status
                #expect(got3 == 400)
                let got4 = try await d.raw(.GET, "/v1/transfers/42").status
                #expect(got4 == 404)
                let got5 = try await d.raw(.POST, "/v1/transfers/42/pause").status
                #expect(got5 == 404)
                let badState = try await d.raw(.GET, "/v1/transfers?state=sleeping")
                #expect(badState.status == 400)
                #expect(badState.body.contains("sleeping"))
            }
        }
    }

    @Test func aTransferThroughTheAPI() async throws {
        let file = Origin.File(data: Origin.bytes(2_000_000))
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/show/episode.mp3", file)
            origin.script("/show/episode.mp3", [.holdAfter(200_000, gate)])  // until paused
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let url = base.appendingPathComponent("show/episode.mp3").absoluteString
                    let created = try await d.client.createTransfers(.init(urls: [url], session: "api", taskDescription: "ep 1"))
                    let id = created.transfers[0].id
                    #expect(created.transfers[0].taskDescription == "ep 1")
                    #expect(created.transfers[0].session == "api")

                    try await eventually("bytes") { try await d.client.transfer(id).bytesReceived > 100_000 }
                    let paused = try await d.client.pause(id)
                    #expect(paused.state == .paused)
                    gate.open()
                    let resumeData = try ResumeData(blob: try await d.client.resumeData(id))
                    #expect(resumeData.url == url)
                    #expect(resumeData.session == "api")

                    // Listing filters by session and state.
                    let got6 = try await d.client.transfers(session: "api", states: [.paused]).transfers.map(\.id)
                    #expect(got6 == [id])
                    let got7 = try await d.client.transfers(session: "other").transfers
                    #expect(got7.isEmpty)
                    let got8 = try await d.client.transfers(states: [.running]).transfers
                    #expect(got8.isEmpty)

                    _ = try await d.client.resume(id)
                    try await eventually("completed") { try await d.client.transfer(id).state == .completed }
                    let done = try await d.client.transfer(id)
                    #expect(done.sha256 == file.sha256)
                    #expect(done.path == d.paths.library.appendingPathComponent("Downloads/episode.mp3").path)

                    // A completed transfer has no resume data; pausing it is a conflict.
                    let conflict = try await d.raw(.POST, "/v1/transfers/\(id)/pause")
                    #expect(conflict.status == 409)
                    let got9 = try await d.raw(.GET, "/v1/transfers/\(id)/resume-data").status
                    #expect(got9 == 409)

                    // The JSON has the documented stable keys, null when unknown.
                    let json = try await d.raw(.GET, "/v1/transfers/\(id)").body
                    let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
                    for key in ["id", "url", "session", "state", "bytesReceived", "totalBytes", "path", "sha256", "error"] {
                        #expect(object.keys.contains(key), "\(key)")
                    }
                    #expect(object["error"] is NSNull)

                    try await d.client.remove(id, deleteFile: true)
                    #expect(!FileManager.default.fileExists(atPath: done.path!))
                    let got10 = try await d.raw(.GET, "/v1/transfers/\(id)").status
                    #expect(got10 == 404)
                }
            }
        }
    }

    @Test func cancelKeepingResumeDataThenResumeFromItInAFreshRequest() async throws {
        let file = Origin.File(data: Origin.bytes(1_500_000))
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/f", file)
            origin.script("/f", [.holdAfter(300_000, gate)])  // until cancelled
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let id = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("f").absoluteString])).transfers[0].id
                    try await eventually("bytes") { try await d.client.transfer(id).bytesReceived > 200_000 }
                    let cancelled = try await d.client.cancel(id, keepResumeData: true)
                    #expect(cancelled.state == .cancelled)
                    gate.open()
                    let blob = try await d.client.resumeData(id)
                    #expect(try ResumeData(blob: blob).durableBytes == 300_000, "the cancel answered once every byte was durable")
                    let resumed = try await d.client.createTransfers(.init(resumeData: blob.base64EncodedString(), session: "cli"))
                    #expect(resumed.transfers.map(\.id) == [id])
                    try await eventually("completed") { try await d.client.transfer(id).state == .completed }
                    let got11 = try await d.client.transfer(id).sha256
                    #expect(got11 == file.sha256)
                    // Only the remainder is fetched again.
                    let durable = try ResumeData(blob: blob).durableBytes
                    #expect(origin.requests(for: "/f").last?.range == "bytes=\(durable)-")
                    #expect(origin.bytesSentPerRequest("/f").last == file.data.count - Int(durable))
                }
            }
        }
    }
}
