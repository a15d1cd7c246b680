import FerryTestSupport
import FerryURLSession
import Synchronization
import Testing

/// A local session's upload tasks against a real receiving server on loopback: the body from
/// memory or a file, `didSendBodyData` as it goes, the server's answer as a data task's, and no
/// resume data (Apple gives none where the upload cannot go on).
@Suite struct LocalUploadTests {
    @Test(arguments: [false, true])
    func anUploadSendsItsBodyReportsItAndHandsOverTheAnswer(fromFile: Bool) async throws {
        let body = Origin.bytes(700_000, seed: 21)
        try await UploadReceiver.run { receiver, base in
            try await withTemporaryDirectory { folder in
                let recorder = Recorder()
                let session = URLSession(configuration: .ephemeral, delegate: recorder, delegateQueue: nil)
                recorder.session = session
                var request = URLRequest(url: base.appendingPathComponent("plain/clip.m4a"))
                request.httpMethod = "PUT"
                request.setValue("audio/mp4", forHTTPHeaderField: "Content-Type")
                let task: URLSessionUploadTask
                if fromFile {
                    let file = folder.appendingPathComponent("clip.m4a")
                    try body.write(to: file)
                    task = session.uploadTask(with: request, fromFile: file)
                } else {
                    task = session.uploadTask(with: request, from: body)
                }
                task.resume()
                await recorder.end(of: task)
                #expect(recorder.calls(task).last?.error == nil)
                #expect(receiver.completed.first?.body == body)
                #expect(receiver.completed.first?.method == "PUT")
                #expect(receiver.completed.first?.headers["content-type"] == "audio/mp4")
                let sends = recorder.calls(task).filter { $0.name == "didSendBodyData" }
                #expect(!sends.isEmpty)
                #expect(sends.last?.numbers.dropFirst().first == Int64(body.count), "the last report says all of it")
                #expect(sends.last?.numbers.last == Int64(body.count), "the expected size is the body's")
                #expect(sends.map { $0.numbers[1] } == sends.map { $0.numbers[1] }.sorted(), "totals only grow")
                #expect(sends.map { $0.numbers[0] }.reduce(0, +) == Int64(body.count), "the pieces add up")
                #expect(task.countOfBytesSent == Int64(body.count))
                // Apple's order: the body is sent, then the answer, then the end.
                let names = recorder.names(task).filter { $0 != "didSendBodyData" && $0 != "didCreateTask" }
                #expect(names.first == "didReceiveResponse" && names.last == "didComplete")
                #expect(recorder.calls(task).first { $0.name == "didReceiveResponse" }?.numbers == [201])
                #expect(recorder.calls(task).allSatisfy { $0.onDelegateQueue })
            }
        }
    }

    @Test func theCompletionHandlerGetsTheServersAnswer() async throws {
        try await UploadReceiver.run { receiver, base in
            let session = URLSession(configuration: .ephemeral)
            var request = URLRequest(url: base.appendingPathComponent("plain/note.txt"))
            request.httpMethod = "POST"
            let answer: (Data?, Int?, Error?) = await withCheckedContinuation { done in
                session.uploadTask(with: request, from: Data("hello".utf8)) { data, response, error in
                    done.resume(returning: (data, (response as? HTTPURLResponse)?.statusCode, error))
                }.resume()
            }
            #expect(answer.2 == nil)
            #expect(answer.1 == 201)
            let json = try JSONSerialization.jsonObject(with: try #require(answer.0)) as? [String: String]
            #expect(json?["bytes"] == "5", "the server's own body, as the server wrote it")
            #expect(receiver.completed.first?.body == Data("hello".utf8))
        }
    }

    @Test func aCancelledLocalUploadHasNoResumeDataAndResumeDataCannotStartOne() async throws {
        try await UploadReceiver.run { receiver, base in
            let held = Origin.Gate()
            receiver.holdNextBody(after: 100_000, until: held)
            let recorder = Recorder()
            let session = URLSession(configuration: .ephemeral, delegate: recorder, delegateQueue: nil)
            recorder.session = session
            var request = URLRequest(url: base.appendingPathComponent("plain/big"))
            request.httpMethod = "PUT"
            let task = session.uploadTask(with: request, from: Origin.bytes(1 << 20, seed: 22))
            task.resume()
            try await eventually("100,000 bytes at the server") { receiver.bytesReceived >= 100_000 }
            let blob: Data? = await withCheckedContinuation { done in task.cancel(byProducingResumeData: { done.resume(returning: $0) }) }
            await recorder.end(of: task)
            held.open()
            #expect(blob == nil)
            #expect(recorder.calls(task).last?.error?.code == .cancelled)
            #expect(recorder.calls(task).last?.error?.uploadTaskResumeData == nil)
            #expect(receiver.completed.isEmpty)

            let resumed = session.uploadTask(withResumeData: Data("anything".utf8))
            resumed.resume()
            await recorder.end(of: resumed)
            #expect(recorder.calls(resumed).last?.error?.code == .cannotWriteToFile)
        }
    }
}
