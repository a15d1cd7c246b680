import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// `POST /v1/uploads` and the configuration endpoints over real HTTP: an upload with its
/// events and the server's answer, options read back redacted, bad input refused with 400.
@Suite struct UploadAPITests {
    @Test func anUploadThroughTheAPIWithItsEventsAndAnswer() async throws {
        let data = Origin.bytes(500_000, seed: 3)
        try await UploadReceiver.run { receiver, base in
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let file = home.appendingPathComponent("report.pdf")
                    try data.write(to: file)
                    let options = TransferOptions(headers: ["Authorization": "Bearer s3cret", "X-Client": "tests"])
                    let created = try await d.client.upload(
                        CreateUploadRequest(file: file.path, url: base.appendingPathComponent("ietf").absoluteString, session: "api", options: options)
                    )
                    let id = try #require(created.transfers.first).id
                    #expect(created.transfers.first?.options?.headers == ["Authorization": "<redacted>", "X-Client": "tests"])
                    let events = try await d.collectEvents(session: "api", after: created.lastEventSeq) { events in
                        events.contains { $0.kind == .completed }
                    }
                    #expect(events.map(\.kind).filter { $0 != .progress } == [.created, .started, .completed])
                    #expect(events.last?.path == file.path, "an upload's completion names the file sent")
                    let done = try await d.client.transfer(id)
                    #expect(done.state == .completed)
                    #expect(done.kind == .upload)
                    #expect(done.uploadProtocol == .ietf)
                    #expect(done.response?.status == 200)
                    #expect(receiver.completed.first?.body == data)
                    #expect(receiver.requestHeaders.allSatisfy { $0["authorization"] == "Bearer s3cret" })

                    let listed = try await d.raw(.GET, "/v1/transfers?session=api")
                    let streamed = String(decoding: try FerryJSON.encoder().encode(events), as: UTF8.self)
                    for text in [listed.body, streamed] { #expect(!text.contains("s3cret")) }
                }
            }
        }
    }

    @Test func uploadsThatCannotBeAreRefusedWith400() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let bodies = [
                    #"{"file":"relative","url":"http://127.0.0.1:9/x"}"#,
                    #"{"file":"/nonexistent/file","url":"http://127.0.0.1:9/x"}"#,
                    #"{"file":"/etc/hostname","url":"notaurl"}"#,
                    #"{"file":"/etc/hostname","url":"http://127.0.0.1:9/x","method":"GET"}"#,
                    #"{"url":"http://127.0.0.1:9/x"}"#,
                ]
                for body in bodies {
                    let response = try await d.raw(.POST, "/v1/uploads", headers: [("Content-Type", "application/json")], body: body)
                    #expect(response.status == 400, "\(body) → \(response.status) \(response.body)")
                    #expect(response.body.contains(#""error""#))
                }
                #expect(try await d.client.transfers().transfers.isEmpty)
            }
        }
    }

    @Test func configurationIsReadRedactedAndValidated() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let empty = try await d.client.sessionConfiguration("feeds")
                #expect(empty.options.isEmpty)
                let set = TransferOptionsUpdate(set: .init(headers: ["Cookie": "s=s3cret", "Accept-Language": "fr"], maxConcurrent: 2))
                let updated = try await d.client.updateSessionConfiguration("feeds", set)
                #expect(updated.options.headers == ["Cookie": "<redacted>", "Accept-Language": "fr"])
                let read = try await d.raw(.GET, "/v1/sessions/feeds/config")
                #expect(read.status == 200)
                #expect(!read.body.contains("s3cret"))
                #expect(read.body.contains("<redacted>"))

                for body in [#"{"set":{"bytesPerSecond":5}}"#, #"{"clear":["everything"]}"#, #"{"set":{"headers":{"Host":"x"}}}"#, "not json"] {
                    let response = try await d.raw(.PATCH, "/v1/sessions/feeds/config", headers: [("Content-Type", "application/json")], body: body)
                    #expect(response.status == 400, "\(body) → \(response.status) \(response.body)")
                }
                let badName = try await d.raw(.GET, "/v1/sessions/bad%20name/config")
                #expect(badName.status == 400)

                let daemon = try await d.client.updateDaemonConfiguration(.init(set: .init(bytesPerSecond: 10 << 20)))
                #expect(daemon.bytesPerSecond == 10 << 20)
                #expect(try await d.client.daemonConfiguration().bytesPerSecond == 10 << 20)
                #expect(try await d.client.sessionConfiguration("feeds").options.bytesPerSecond == nil)
            }
        }
    }
}
