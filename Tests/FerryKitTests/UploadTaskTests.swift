import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// `BackgroundSession.uploadTask(with:fromFile:)` and the session's options, through a real
/// daemon: the task's events arrive like a download's, and the server's answer is kept.
@Suite struct UploadTaskTests {
    @Test func anUploadTaskSendsTheFileAndReportsTheServersAnswer() async throws {
        let data = Origin.bytes(400_000, seed: 5)
        try await UploadReceiver.run { receiver, base in
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home) { d in
                    let session = try await d.session("uploader")
                    let options = try await session.updateTransferOptions(.init(set: .init(headers: ["X-Api-Key": "k3y"])))
                    #expect(options.headers == ["X-Api-Key": "<redacted>"])
                    #expect(try await session.transferOptions() == options)

                    let file = home.appendingPathComponent("clip.m4a")
                    try data.write(to: file)
                    let task = try await session.uploadTask(with: base.appendingPathComponent("tus"), fromFile: file)
                    #expect(task.transfer.kind == .upload)
                    let events = try await collect(session) { $0.finished[task.taskIdentifier] != nil }
                    #expect(events.finished[task.taskIdentifier]?.sha256 == Origin.sha256(data))
                    try await task.refresh()
                    #expect(task.state == .completed)
                    #expect(task.transfer.uploadProtocol == .tus)
                    #expect(task.transfer.response?.status == 204)
                    #expect(receiver.completed.first?.body == data)
                    #expect(receiver.requestHeaders.allSatisfy { $0["x-api-key"] == "k3y" })
                }
            }
        }
    }
}
