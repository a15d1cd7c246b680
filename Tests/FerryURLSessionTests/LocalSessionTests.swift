import FerryTestSupport
import FerryURLSession
import Synchronization
import Testing

/// URLSession's default and ephemeral sessions against a real HTTP server on loopback: what the
/// Half Tunes tutorial does (a search by data task, downloads by delegate, pause with resume
/// data), with Apple's order of delegate messages, on the delegate queue.
@Suite struct LocalSessionTests {
    @Test func aSearchByDataTaskAnswersItsCompletionHandlerOnTheDelegateQueue() async throws {
        try await Origin.run { origin, base in
            origin.serve("/search", .init(data: Data(#"{"resultCount":1}"#.utf8), contentType: "application/json"))
            let session = URLSession(configuration: .default)
            let answered = Mutex<(Data?, Int?, Error?, Bool)?>(nil)
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let task = session.dataTask(with: base.appendingPathComponent("search")) { data, response, error in
                    answered.withLock { $0 = (data, (response as? HTTPURLResponse)?.statusCode, error, OperationQueue.current === session.delegateQueue) }
                    done.resume()
                }
                #expect(task.state == .suspended, "made suspended")
                #expect(origin.requests.isEmpty, "nothing asked before resume()")
                task.resume()
            }
            let (data, status, error, onQueue) = try #require(answered.withLock { $0 })
            #expect(data == Data(#"{"resultCount":1}"#.utf8))
            #expect(status == 200)
            #expect(error == nil)
            #expect(onQueue)
        }
    }

    @Test func aNewSearchCancelsTheLastOneWhichEndsCancelled() async throws {
        try await Origin.run { origin, base in
            let held = Origin.Gate()
            origin.serve("/slow", .init(data: Origin.bytes(64 << 10)))
            origin.script("/slow", [.holdAfter(1024, held)])
            origin.serve("/fast", .init(data: Data("ok".utf8)))
            let session = URLSession(configuration: .default)
            let first = Mutex<Error?>(nil)
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let task = session.dataTask(with: base.appendingPathComponent("slow")) { _, _, error in
                    first.withLock { $0 = error }
                    done.resume()
                }
                task.resume()
                Task {
                    try await eventually("a request for /slow") { !origin.requests(for: "/slow").isEmpty }
                    task.cancel()
                }
            }
            let error = try #require(first.withLock { $0 } as? URLError)
            #expect(error.code == .cancelled)
            #expect((error as NSError).code == NSURLErrorCancelled)
            let (data, _) = try await session.data(from: base.appendingPathComponent("fast"))
            #expect(data == Data("ok".utf8))
        }
    }

    @Test func aDownloadReportsProgressThenHandsOverItsFileThenEnds() async throws {
        try await Origin.run { origin, base in
            let bytes = Origin.bytes(3 << 20)
            origin.serve("/preview.m4a", .init(data: bytes))
            let recorder = Recorder()
            let session = URLSession(configuration: .default, delegate: recorder, delegateQueue: nil)
            recorder.session = session
            let task = session.downloadTask(with: base.appendingPathComponent("preview.m4a"))
            task.resume()
            await recorder.end(of: task)
            let calls = recorder.calls(task)
            let names = calls.map(\.name).filter { $0 != "didWriteData" }
            #expect(names == ["didCreateTask", "didFinishDownloading", "didComplete"])
            let writes = calls.filter { $0.name == "didWriteData" }
            #expect(!writes.isEmpty)
            #expect(writes.map { $0.numbers[0] }.reduce(0, +) == Int64(bytes.count), "bytesWritten adds up to the file")
            #expect(writes.last?.numbers[1] == Int64(bytes.count))
            #expect(writes.allSatisfy { $0.numbers[2] == Int64(bytes.count) }, "expected from Content-Length")
            #expect(calls.firstIndex { $0.name == "didWriteData" }! < calls.firstIndex { $0.name == "didFinishDownloading" }!)
            #expect(calls.allSatisfy { $0.onDelegateQueue })
            #expect(recorder.files.withLock { $0[task.taskIdentifier] } == bytes, "the file is whole during the call")
            let location = try #require(recorder.location)
            #expect(!FileManager.default.fileExists(atPath: location.path), "removed when the call returned")
            #expect(task.state == .completed)
            #expect(task.countOfBytesReceived == Int64(bytes.count))
            #expect(task.progress.fractionCompleted == 1)
        }
    }

    @Test func pausedWithResumeDataADownloadGoesOnWithARangeFromItsBytes() async throws {
        try await Origin.run { origin, base in
            let bytes = Origin.bytes(2 << 20, seed: 7)
            let held = Origin.Gate()
            origin.serve("/episode.mp3", .init(data: bytes))
            origin.script("/episode.mp3", [.holdAfter(512 << 10, held)])
            let recorder = Recorder()
            let session = URLSession(configuration: .default, delegate: recorder, delegateQueue: nil)
            recorder.session = session
            let task = session.downloadTask(with: base.appendingPathComponent("episode.mp3"))
            task.resume()
            try await eventually("512 KiB received") { task.countOfBytesReceived >= 512 << 10 }
            let resumeData: Data? = await withCheckedContinuation { continuation in
                task.cancel(byProducingResumeData: { continuation.resume(returning: $0) })
            }
            await recorder.end(of: task)
            let blob = try #require(resumeData)
            let end = try #require(recorder.calls(task).last)
            #expect(end.name == "didComplete")
            #expect(end.error?.code == .cancelled)
            #expect(end.error?.downloadTaskResumeData == blob, "the same data in the error's userInfo")
            #expect(!recorder.names(task).contains("didFinishDownloading"))
            held.open()

            // Another session (as in the next run of the program: the data holds all it needs).
            session.finishTasksAndInvalidate()
            let next = Recorder()
            let later = URLSession(configuration: .default, delegate: next, delegateQueue: nil)
            next.session = later
            let resumed = later.downloadTask(withResumeData: blob)
            #expect(resumed.originalRequest?.url == base.appendingPathComponent("episode.mp3"))
            resumed.resume()
            await next.end(of: resumed)
            let offset = Int64(512 << 10)
            let calls = next.calls(resumed)
            #expect(calls.first { $0.name == "didResumeAtOffset" }?.numbers == [offset, Int64(bytes.count)])
            #expect(calls.last?.name == "didComplete" && calls.last?.error == nil)
            #expect(next.files.withLock { $0[resumed.taskIdentifier] } == bytes)
            let second = try #require(origin.requests(for: "/episode.mp3").last)
            #expect(second.range == "bytes=\(offset)-")
            #expect(second.ifRange == "\"v1\"")
            #expect(origin.bytesSentPerRequest("/episode.mp3").last == bytes.count - Int(offset), "only the rest was sent again")
        }
    }

    @Test func aCancelledDownloadClosesItsConnection() async throws {
        try await Origin.run { origin, base in
            var file = Origin.File(data: Origin.bytes(8 << 20, seed: 2))
            file.bytesPerSecond = 2 << 20
            origin.serve("/big.mp3", file)
            let recorder = Recorder()
            let session = URLSession(configuration: .ephemeral, delegate: recorder, delegateQueue: nil)
            recorder.session = session
            let task = session.downloadTask(with: base.appendingPathComponent("big.mp3"))
            task.resume()
            try await eventually("256 KiB received") { task.countOfBytesReceived >= 256 << 10 }
            task.cancel()
            await recorder.end(of: task)
            let sent = origin.bytesSent("/big.mp3")
            try await Task.sleep(for: .seconds(1))
            #expect(origin.bytesSent("/big.mp3") - sent < 512 << 10, "the server stopped sending: the connection is closed")
        }
    }

    @Test func resumeDataThatCannotBeUsedFailsAsApplesDoesAndAChangedFileStartsOver() async throws {
        try await Origin.run { origin, base in
            let recorder = Recorder()
            let session = URLSession(configuration: .default, delegate: recorder, delegateQueue: nil)
            recorder.session = session
            // Not resume data at all.
            let garbage = session.downloadTask(withResumeData: Data("not resume data".utf8))
            garbage.resume()
            await recorder.end(of: garbage)
            #expect(recorder.calls(garbage).last?.error?.code == .cannotWriteToFile)
            #expect((recorder.calls(garbage).last?.error as NSError?)?.code == -3003)

            // Resume data whose bytes are gone.
            let bytes = Origin.bytes(1 << 20, seed: 3)
            let held = Origin.Gate()
            origin.serve("/a.mp3", .init(data: bytes))
            origin.script("/a.mp3", [.holdAfter(256 << 10, held)])
            let first = session.downloadTask(with: base.appendingPathComponent("a.mp3"))
            first.resume()
            try await eventually("256 KiB of the first") { first.countOfBytesReceived >= 256 << 10 }
            let blob: Data? = await withCheckedContinuation { continuation in first.cancel(byProducingResumeData: { continuation.resume(returning: $0) }) }
            held.open()
            let data = try #require(blob)
            let plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
            let path = try #require(plist["NSURLSessionResumeInfoLocalPath"] as? String)
            #expect(plist["NSURLSessionResumeBytesReceived"] as? Int == 256 << 10, "Apple's keys, for code that peeks")
            let kept = try Data(contentsOf: URL(fileURLWithPath: path))
            try FileManager.default.removeItem(atPath: path)
            let gone = session.downloadTask(withResumeData: data)
            gone.resume()
            await recorder.end(of: gone)
            #expect(recorder.calls(gone).last?.error?.code == .cannotWriteToFile)

            // The file changed on the server: If-Range makes it send the whole new file, and the
            // download starts over at 0.
            try kept.write(to: URL(fileURLWithPath: path))
            let changed = Origin.bytes(1 << 20, seed: 4)
            origin.update("/a.mp3") { $0.data = changed; $0.etag = "\"v2\"" }
            let again = session.downloadTask(withResumeData: data)
            again.resume()
            await recorder.end(of: again)
            #expect(recorder.calls(again).first { $0.name == "didResumeAtOffset" }?.numbers == [0, Int64(changed.count)])
            #expect(recorder.files.withLock { $0[again.taskIdentifier] } == changed)
        }
    }

    @Test func redirectsAreAskedAndARefusedOneIsTheAnswer() async throws {
        try await Origin.run { origin, base in
            origin.serve("/new", .init(data: Data("moved".utf8)))
            origin.redirect("/old", to: "/new", status: 301)
            let recorder = Recorder()
            let session = URLSession(configuration: .default, delegate: recorder, delegateQueue: nil)
            recorder.session = session
            let followed = session.dataTask(with: base.appendingPathComponent("old"))
            followed.resume()
            await recorder.end(of: followed)
            #expect(recorder.names(followed) == ["didCreateTask", "willRedirect", "didReceiveResponse", "didReceiveData", "didComplete"])
            #expect(followed.currentRequest?.url?.path == "/new")
            #expect(followed.originalRequest?.url?.path == "/old")
            recorder.redirect = { _ in nil }
            let refused = session.dataTask(with: base.appendingPathComponent("old"))
            refused.resume()
            await recorder.end(of: refused)
            #expect((refused.response as? HTTPURLResponse)?.statusCode == 301)
            #expect(origin.requests(for: "/new").count == 1)
        }
    }

    @Test func aLoginIsAskedOfTheDelegateAndAWrongOneAgainWithItsCount() async throws {
        try await Origin.run { origin, base in
            origin.serve("/private", .init(data: Data("secret".utf8)))
            origin.protect("/private", user: "alice", password: "s3cret")
            let recorder = Recorder()
            recorder.challenge = { challenge in
                #expect(challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPBasic)
                #expect(challenge.protectionSpace.realm == "test")
                if challenge.previousFailureCount == 0 { return (.useCredential, URLCredential(user: "alice", password: "wrong", persistence: .none)) }
                return (.cancelAuthenticationChallenge, nil)
            }
            let session = URLSession(configuration: .ephemeral, delegate: recorder, delegateQueue: nil)
            recorder.session = session
            let wrong = session.dataTask(with: base.appendingPathComponent("private"))
            wrong.resume()
            await recorder.end(of: wrong)
            #expect(recorder.calls(wrong).filter { $0.name == "didReceiveChallenge" }.map(\.numbers) == [[0], [1]])
            #expect(recorder.calls(wrong).last?.error?.code == .userCancelledAuthentication)

            recorder.challenge = { _ in (.useCredential, URLCredential(user: "alice", password: "s3cret", persistence: .none)) }
            let right = session.dataTask(with: base.appendingPathComponent("private"))
            right.resume()
            await recorder.end(of: right)
            #expect((right.response as? HTTPURLResponse)?.statusCode == 200)
            #expect(recorder.calls(right).last?.error == nil)
        }
    }

    @Test func aCachedAnswerIsUsedAsItsPolicySays() async throws {
        try await Origin.run { origin, base in
            var file = Origin.File(data: Data("catalog".utf8), contentType: "application/json")
            file.extraHeaders["Cache-Control"] = "max-age=600"
            origin.serve("/cached", file)
            let session = URLSession(configuration: .ephemeral)
            let url = base.appendingPathComponent("cached")
            _ = try await session.data(from: url)
            let (again, response) = try await session.data(from: url)
            #expect(again == Data("catalog".utf8))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(origin.requests(for: "/cached").count == 1, "fresh: answered from the cache")
            var reload = URLRequest(url: url)
            reload.cachePolicy = .reloadIgnoringLocalCacheData
            _ = try await session.data(for: reload)
            #expect(origin.requests(for: "/cached").count == 2)
            var offline = URLRequest(url: base.appendingPathComponent("never"))
            offline.cachePolicy = .returnCacheDataDontLoad
            await #expect { try await session.data(for: offline) } throws: { ($0 as? URLError)?.code == .resourceUnavailable }
            #expect(origin.requests(for: "/never").isEmpty)

            // Stale with a validator: asked again with If-None-Match, a 304 serves the cache.
            origin.serve("/etag", .init(data: Data("v1 body".utf8)))
            _ = try await session.data(from: base.appendingPathComponent("etag"))
            let (body, _) = try await session.data(from: base.appendingPathComponent("etag"))
            #expect(body == Data("v1 body".utf8))
            #expect(origin.requests(for: "/etag").last?.ifNoneMatch == "\"v1\"")
        }
    }

    @Test func anEphemeralSessionKeepsItsCookiesToItselfAndNothingAfter() async throws {
        try await Origin.run { origin, base in
            var file = Origin.File(data: Data("hi".utf8))
            file.extraHeaders["Set-Cookie"] = "visit=42; Path=/"
            origin.serve("/login", file)
            origin.serve("/next", .init(data: Data("next".utf8)))
            let session = URLSession(configuration: .ephemeral)
            _ = try await session.data(from: base.appendingPathComponent("login"))
            _ = try await session.data(from: base.appendingPathComponent("next"))
            #expect(origin.requests(for: "/next").last?.headers["cookie"] == "visit=42")
            #expect(HTTPCookieStorage.shared.cookies(for: base.appendingPathComponent("next"))?.isEmpty ?? true, "not in the shared storage")
            _ = try await URLSession(configuration: .ephemeral).data(from: base.appendingPathComponent("next"))
            #expect(origin.requests(for: "/next").last?.headers["cookie"] == nil, "another ephemeral session has none")
            #expect(URLCache.shared.cachedResponse(for: URLRequest(url: base.appendingPathComponent("login"))) == nil, "nor in the shared cache")
            let recorder = Recorder()
            let quiet = URLSession(configuration: .ephemeral, delegate: recorder, delegateQueue: nil)
            recorder.session = quiet
            let task = quiet.downloadTask(with: base.appendingPathComponent("next"))
            task.resume()
            await recorder.end(of: task)
            let location = try #require(recorder.location)
            #expect(!FileManager.default.fileExists(atPath: location.path), "no temporary file left behind")
        }
    }

    @Test func aSuspendedDownloadWaitsAndGoesOnWhenResumed() async throws {
        try await Origin.run { origin, base in
            let bytes = Origin.bytes(1 << 20, seed: 9)
            origin.serve("/s.mp3", .init(data: bytes))
            let recorder = Recorder()
            let session = URLSession(configuration: .default, delegate: recorder, delegateQueue: nil)
            recorder.session = session
            let task = session.downloadTask(with: base.appendingPathComponent("s.mp3"))
            task.resume()
            task.suspend()
            #expect(task.state == .suspended)
            try await Task.sleep(for: .milliseconds(300))
            #expect(task.countOfBytesReceived < Int64(bytes.count), "suspended: it does not finish")
            task.resume()
            await recorder.end(of: task)
            #expect(recorder.files.withLock { $0[task.taskIdentifier] } == bytes)
        }
    }

    @Test func aSessionThatWaitsForConnectivitySaysSoOnceThenTimesOut() async throws {
        let recorder = Recorder()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.waitsForConnectivity = true
        configuration.timeoutIntervalForResource = 2
        let session = URLSession(configuration: configuration, delegate: recorder, delegateQueue: nil)
        recorder.session = session
        let port = try RefusingPort()
        let task = session.dataTask(with: URL(string: "http://127.0.0.1:\(port.port)/x")!)
        task.resume()
        await recorder.end(of: task)
        #expect(recorder.names(task) == ["didCreateTask", "waitingForConnectivity", "didComplete"])
        #expect(recorder.calls(task).last?.error?.code == .timedOut)
    }

    @Test func anUnreachableServerFailsWithApplesCodeAndAnInvalidatedSessionSaysSo() async throws {
        let recorder = Recorder()
        let session = URLSession(configuration: .ephemeral, delegate: recorder, delegateQueue: nil)
        recorder.session = session
        let port = try RefusingPort()
        let task = session.dataTask(with: URL(string: "http://127.0.0.1:\(port.port)/x")!)
        task.resume()
        await recorder.end(of: task)
        #expect(recorder.calls(task).last?.error?.code == .cannotConnectToHost)
        let bad = session.dataTask(with: URL(string: "ftp://127.0.0.1/file")!)
        bad.resume()
        await recorder.end(of: bad)
        #expect(recorder.calls(bad).last?.error?.code == .unsupportedURL)
        session.finishTasksAndInvalidate()
        for _ in 0..<100 where !recorder.calls.withLock({ $0.contains { $0.name == "didBecomeInvalid" } }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(recorder.calls.withLock { $0.last?.name } == "didBecomeInvalid")
        #expect(session.delegate == nil, "the delegate is let go")
    }
}
