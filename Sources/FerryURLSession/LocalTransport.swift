import AsyncHTTPClient
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Synchronization

/// Runs a session's tasks in this process, on AsyncHTTPClient: redirects and authentication
/// challenges put to the delegate, cookies, the URL cache for data tasks, a download written to a
/// temporary file and continued from resume data with `Range` and `If-Range`.
final class LocalTransport: TaskTransport {
    enum Body: Sendable {
        case data(Data)
        case file(URL)
    }

    enum Completion: Sendable {
        case data(@Sendable (Data?, URLResponse?, Error?) -> Void)
        case download(@Sendable (URL?, URLResponse?, Error?) -> Void)
    }

    enum Resumption: Sendable {
        case valid(LocalResumeData)
        /// Resume data that was not this module's, or unreadable.
        case invalid
    }

    /// One started task's controls.
    final class Run: Sendable {
        let gate = Gate()
        let work = Mutex<Task<Void, Never>?>(nil)
        /// Set by `cancel(byProducingResumeData:)` before the work is cancelled.
        let wantsResumeData = Mutex<(@Sendable (Data?) -> Void)?>(nil)
        /// Bytes written and not yet reported by `didWriteData` (coalesced while the delegate
        /// queue is busy).
        let unreported = Mutex<(bytes: Int64, total: Int64, expected: Int64)?>(nil)
        /// Ends the work when the resource timeout passes; `expired` then says why it ended.
        let timer = Mutex<Task<Void, Never>?>(nil)
        let expired = Mutex(false)
        /// Set by `cancel()`: the bytes so far are nobody's, so they go.
        let discarded = Mutex(false)
    }

    let configuration: URLSessionConfiguration
    let client: HTTPClient
    let completions = Mutex<[Int: Completion]>([:])
    let bodies = Mutex<[Int: Body]>([:])
    let resumptions = Mutex<[Int: Resumption]>([:])
    private let runs = Mutex<[Int: Run]>([:])

    init(configuration: URLSessionConfiguration) {
        self.configuration = configuration
        client = Clients.client(for: Clients.Key(configuration), configuration: configuration)
    }

    // MARK: TaskTransport

    func start(_ task: URLSessionTask) {
        let run = Run()
        runs.withLock { $0[task.taskIdentifier] = run }
        let work = Task { await self.perform(task, run) }
        run.work.withLock { $0 = work }
        let limit = configuration.timeoutIntervalForResource
        guard limit.isFinite, limit > 0 else { return }
        // The whole task, connecting and every byte, within the resource timeout (Apple's meaning).
        run.timer.withLock {
            $0 = Task {
                guard (try? await Task.sleep(for: .seconds(limit))) != nil else { return }
                run.expired.withLock { $0 = true }
                run.work.withLock { $0 }?.cancel()
                run.gate.open()
            }
        }
    }

    func pause(_ task: URLSessionTask) {
        runs.withLock { $0[task.taskIdentifier] }?.gate.close()
    }

    func unpause(_ task: URLSessionTask) {
        runs.withLock { $0[task.taskIdentifier] }?.gate.open()
    }

    func stop(_ task: URLSessionTask, started: Bool, producingResumeData: (@Sendable (Data?) -> Void)?) {
        guard started, let run = runs.withLock({ $0[task.taskIdentifier] }) else {
            // Never resumed: nothing runs, so nothing can be resumed either.
            if let producingResumeData { task.session.onDelegateQueue { producingResumeData(nil) } }
            complete(task, error: URLErrorMaker.cancelled(task.originalRequest?.url))
            return
        }
        run.wantsResumeData.withLock { $0 = producingResumeData }
        run.discarded.withLock { $0 = producingResumeData == nil }
        run.work.withLock { $0 }?.cancel()
        run.gate.open()
    }

    // MARK: The work

    private func perform(_ task: URLSessionTask, _ run: Run) async {
        let resumption = resumptions.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        do {
            if case .invalid = resumption {
                let why = task is URLSessionUploadTask
                    ? "Only a background session resumes uploads; this session sends each upload in one request."
                    : "The resume data was not made by a download of this program's sessions, or cannot be read."
                throw URLErrorMaker.make(.cannotWriteToFile, task.originalRequest?.url, why)
            }
            guard var request = task.currentRequest, request.url != nil else {
                throw URLErrorMaker.make(.badURL, nil, "The task has no URL.")
            }
            if let date = task.earliestBeginDate, date > Date() {
                try await Task.sleep(for: .seconds(date.timeIntervalSinceNow))
                let (disposition, newRequest) = await ask(task) { delegate, answer in
                    delegate.urlSession(task.session, task: task, willBeginDelayedRequest: request) { answer(($0, $1)) }
                } otherwise: { (URLSession.DelayedRequestDisposition.continueLoading, URLRequest?.none) }
                if disposition == .cancel { throw URLErrorMaker.cancelled(request.url) }
                if disposition == .useNewRequest, let newRequest { request = newRequest }
            }
            if let download = task as? URLSessionDownloadTask {
                var resume: LocalResumeData?
                if case .valid(let data) = resumption { resume = data }
                try await self.download(download, request, resume: resume, run)
            } else if let dataTask = task as? URLSessionDataTask {
                try await data(dataTask, request, run)
            }
        } catch {
            complete(task, error: URLErrorMaker.from(error, url: task.currentRequest?.url))
            if let wanted = run.wantsResumeData.withLock({ $0 }) { task.session.onDelegateQueue { wanted(nil) } }
        }
    }

    // MARK: Data tasks

    private func data(_ task: URLSessionDataTask, _ request: URLRequest, _ run: Run) async throws {
        let cache = DataTaskCache(configuration.urlCache, request: request)
        if let cached = cache.usable() {
            task.fields.withLock { $0.response = cached.response }
            try await deliver(cached.data, response: cached.response, to: task, run)
            return
        }
        if request.cachePolicy == .returnCacheDataDontLoad {
            throw URLErrorMaker.make(.resourceUnavailable, request.url, "No cached response, and the cache policy forbids loading.")
        }
        let body = bodies.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        let (response, stream) = try await exchange(task, request, body: body, extraHeaders: cache.conditionalHeaders())
        if response.statusCode == 304, let revalidated = cache.revalidated(by: response) {
            task.fields.withLock { $0.response = revalidated.response }
            try await deliver(revalidated.data, response: revalidated.response, to: task, run)
            return
        }
        let handled = completions.withLock { $0[task.taskIdentifier] } != nil
        if !handled, let delegate = task.session.delegate(for: task) as? URLSessionDataDelegate {
            let disposition = await ask(task) { _, answer in
                delegate.urlSession(task.session, dataTask: task, didReceive: response) { answer($0) }
            } otherwise: { URLSession.ResponseDisposition.allow }
            if disposition == .cancel { throw URLErrorMaker.cancelled(request.url) }
        }
        var collected = Data()
        let keep = handled || cache.mayStore(response)
        for try await chunk in stream {
            await run.gate.pass()
            try Task.checkCancellation()
            let data = Data(buffer: chunk)
            task.received(Int64(data.count), expected: response.expectedContentLength >= 0 ? response.expectedContentLength : nil)
            if keep { collected.append(data) }
            if !handled, let delegate = task.session.delegate(for: task) as? URLSessionDataDelegate {
                task.session.onDelegateQueue { delegate.urlSession(task.session, dataTask: task, didReceive: data) }
            }
        }
        if cache.mayStore(response) {
            let proposed = cache.proposal(response, data: collected)
            let stored: CachedURLResponse?
            if !handled, let delegate = task.session.delegate(for: task) as? URLSessionDataDelegate {
                stored = await ask(task) { _, answer in
                    delegate.urlSession(task.session, dataTask: task, willCacheResponse: proposed) { answer($0.map(CachedBox.init)) }
                } otherwise: { CachedBox(proposed) }?.value
            } else {
                stored = proposed
            }
            if let stored { cache.store(stored) }
        }
        complete(task, error: nil, data: collected)
    }

    /// A cached answer, as if it had come from the network.
    private func deliver(_ data: Data, response: URLResponse, to task: URLSessionDataTask, _ run: Run) async throws {
        task.received(Int64(data.count), expected: Int64(data.count))
        if completions.withLock({ $0[task.taskIdentifier] }) == nil, let delegate = task.session.delegate(for: task) as? URLSessionDataDelegate {
            let disposition = await ask(task) { _, answer in
                delegate.urlSession(task.session, dataTask: task, didReceive: response) { answer($0) }
            } otherwise: { URLSession.ResponseDisposition.allow }
            if disposition == .cancel { throw URLErrorMaker.cancelled(response.url) }
            task.session.onDelegateQueue { delegate.urlSession(task.session, dataTask: task, didReceive: data) }
        }
        complete(task, error: nil, data: data)
    }

    // MARK: Download tasks

    private func download(_ task: URLSessionDownloadTask, _ request: URLRequest, resume: LocalResumeData?, _ run: Run) async throws {
        var extra: [(String, String)] = []
        if let resume {
            let size = (try? FileManager.default.attributesOfItem(atPath: resume.file.path)[.size] as? NSNumber)?.int64Value
            guard let size, size >= resume.bytes else {
                throw URLErrorMaker.make(.cannotWriteToFile, resume.url, "The resume data's partial file (\(resume.file.path)) is gone or shorter than it says.")
            }
            extra.append(("Range", "bytes=\(resume.bytes)-"))
            if let validator = resume.validator { extra.append(("If-Range", validator)) }
        }
        let file = resume?.file ?? FileManager.default.temporaryDirectory.appendingPathComponent("FerryURLSession_\(UUID().uuidString).tmp")
        var written: Int64 = 0
        var response: HTTPURLResponse?
        do {
            let (answer, stream) = try await exchange(task, request, body: nil, extraHeaders: extra)
            response = answer
            var offset: Int64 = 0
            var expected = answer.expectedContentLength >= 0 ? answer.expectedContentLength : NSURLSessionTransferSizeUnknown
            if let resume, answer.statusCode == 206, ContentRange(answer.value(forHTTPHeaderField: "Content-Range"))?.start == resume.bytes {
                offset = resume.bytes
                expected = ContentRange(answer.value(forHTTPHeaderField: "Content-Range"))?.total ?? (expected >= 0 ? offset + expected : expected)
            } else if answer.statusCode == 206 {
                throw URLErrorMaker.make(.cannotParseResponse, request.url, "The server answered a range nobody asked for.")
            }
            if !FileManager.default.fileExists(atPath: file.path) { FileManager.default.createFile(atPath: file.path, contents: nil) }
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            try handle.truncate(atOffset: UInt64(offset))
            try handle.seek(toOffset: UInt64(offset))
            written = offset
            task.fields.withLock {
                $0.received = offset
                $0.expectedToReceive = expected
            }
            if resume != nil, let delegate = task.session.delegate(for: task) as? URLSessionDownloadDelegate {
                task.session.onDelegateQueue { delegate.urlSession(task.session, downloadTask: task, didResumeAtOffset: offset, expectedTotalBytes: expected) }
            }
            for try await chunk in stream {
                await run.gate.pass()
                try Task.checkCancellation()
                try handle.write(contentsOf: Data(buffer: chunk))
                written += Int64(chunk.readableBytes)
                task.received(Int64(chunk.readableBytes), expected: nil)
                report(Int64(chunk.readableBytes), total: written, expected: expected, task, run)
            }
            try handle.synchronize()
        } catch {
            // A failure keeps its bytes for the error's resume data (Apple's too); cancel() does not.
            let blob = run.discarded.withLock { $0 } ? nil : resumable(request, response, written: written, file: file)
            if blob == nil { try? FileManager.default.removeItem(at: file) }
            if let wanted = run.wantsResumeData.withLock({ $0 }) {
                run.wantsResumeData.withLock { $0 = nil }
                task.session.onDelegateQueue { wanted(blob?.encoded()) }
            }
            complete(task, error: URLErrorMaker.from(error, url: request.url, resumeData: blob?.encoded()))
            return
        }
        complete(task, error: nil, location: file)
    }

    /// Reports written bytes to the delegate, coalescing while an earlier report waits on the
    /// delegate queue.
    private func report(_ bytes: Int64, total: Int64, expected: Int64, _ task: URLSessionDownloadTask, _ run: Run) {
        guard let delegate = task.session.delegate(for: task) as? URLSessionDownloadDelegate,
            completions.withLock({ $0[task.taskIdentifier] }) == nil
        else { return }
        let first = run.unreported.withLock { unreported -> Bool in
            defer { unreported = ((unreported?.bytes ?? 0) + bytes, total, expected) }
            return unreported == nil
        }
        guard first else { return }
        task.session.onDelegateQueue {
            guard let report = run.unreported.withLock({ unreported in defer { unreported = nil }; return unreported }) else { return }
            delegate.urlSession(task.session, downloadTask: task, didWriteData: report.bytes, totalBytesWritten: report.total, totalBytesExpectedToWrite: report.expected)
        }
    }

    /// Resume data for a download stopped after `written` bytes, when the server can continue it:
    /// a GET whose answer had a validator to send as `If-Range`.
    private func resumable(_ request: URLRequest, _ response: HTTPURLResponse?, written: Int64, file: URL) -> LocalResumeData? {
        guard written > 0, let response, let url = request.url, [200, 206].contains(response.statusCode),
            (request.httpMethod ?? "GET") == "GET"
        else { return nil }
        let etag = response.value(forHTTPHeaderField: "ETag")
        let lastModified = response.value(forHTTPHeaderField: "Last-Modified")
        let total = ContentRange(response.value(forHTTPHeaderField: "Content-Range"))?.total
            ?? (response.statusCode == 200 && response.expectedContentLength >= 0 ? response.expectedContentLength : nil)
        let resume = LocalResumeData(
            url: url, method: "GET", headers: request.allHTTPHeaderFields ?? [:], bytes: written, total: total, etag: etag,
            lastModified: lastModified, file: file
        )
        return resume.validator == nil ? nil : resume
    }

    // MARK: One exchange: redirects and challenges

    /// Sends `request` and follows what the delegate allows: redirects, and HTTP authentication
    /// challenges. Returns the final response's head and its body.
    private func exchange(
        _ task: URLSessionTask, _ request: URLRequest, body: Body?, extraHeaders: [(String, String)]
    ) async throws -> (HTTPURLResponse, HTTPClientResponse.Body) {
        var request = request
        var body = body
        var redirects = 0
        var failures = 0
        var authorization: String?
        while true {
            task.fields.withLock { $0.currentRequest = request }
            var extra = extraHeaders
            if let authorization { extra.append(("Authorization", authorization)) }
            let answer = try await send(task, request, body: body, extraHeaders: extra)
            guard let url = request.url else { throw URLErrorMaker.make(.badURL, nil, "The request has no URL.") }
            var fields: [String: String] = [:]
            for header in answer.headers { fields[header.name] = fields[header.name].map { "\($0), \(header.value)" } ?? header.value }
            let response = HTTPURLResponse(url: url, statusCode: Int(answer.status.code), httpVersion: "HTTP/\(answer.version.major).\(answer.version.minor)", headerFields: fields)!
            task.session.cookies.keep(fields, from: url, mainDocument: request.mainDocumentURL)
            task.fields.withLock { $0.response = response }

            if [301, 302, 303, 307, 308].contains(response.statusCode), let location = response.value(forHTTPHeaderField: "Location"),
                let target = URL(string: location, relativeTo: url)?.absoluteURL, redirects < 16
            {
                var next = request
                next.url = target
                if response.statusCode == 303 || ([301, 302].contains(response.statusCode) && request.httpMethod == "POST") {
                    next.httpMethod = "GET"
                    next.httpBody = nil
                    body = nil
                }
                let followed = await ask(task) { delegate, answer in
                    delegate.urlSession(task.session, task: task, willPerformHTTPRedirection: response, newRequest: next) { answer($0.map(RequestBox.init)) }
                } otherwise: { RequestBox(next) }
                guard let followed = followed?.value else { return (response, answer.body) }
                for try await _ in answer.body {}  // the redirect's own body: read so its connection is reused
                request = followed
                redirects += 1
                authorization = nil
                continue
            }

            if response.statusCode == 401, let challenge = Challenge(response, url: url, failures: failures) {
                let (disposition, credential) = await ask(task) { delegate, answer in
                    delegate.urlSession(task.session, task: task, didReceive: challenge.challenge) { answer(($0, $1.map(CredentialBox.init))) }
                } otherwise: { (URLSession.AuthChallengeDisposition.performDefaultHandling, CredentialBox?.none) }
                var chosen: URLCredential?
                switch disposition {
                case .useCredential: chosen = credential?.value
                case .performDefaultHandling: chosen = failures == 0 ? challenge.defaultCredential(configuration.urlCredentialStorage, request: request) : nil
                case .cancelAuthenticationChallenge: throw URLErrorMaker.make(.userCancelledAuthentication, url, "The delegate cancelled the authentication challenge.")
                case .rejectProtectionSpace: chosen = nil
                }
                guard let chosen, let user = chosen.user, let password = chosen.password else { return (response, answer.body) }
                for try await _ in answer.body {}
                authorization = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
                failures += 1
                continue
            }
            return (response, answer.body)
        }
    }

    /// One request on the wire; while there is no network and the session waits for one, it
    /// waits (telling the delegate once) until the resource timeout.
    private func send(_ task: URLSessionTask, _ request: URLRequest, body: Body?, extraHeaders: [(String, String)]) async throws -> HTTPClientResponse {
        guard let url = request.url, let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme) else {
            throw URLErrorMaker.make(.unsupportedURL, request.url, "Only http and https URLs can be loaded (\(request.url?.absoluteString.prefix(80) ?? "none")).")
        }
        let deadline = ContinuousClock.now + .seconds(configuration.timeoutIntervalForResource)
        var told = false
        var pause = Duration.milliseconds(250)
        while true {
            do {
                var outgoing = HTTPClientRequest(url: url.absoluteString)
                outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
                var names = Set<String>()
                for (name, value) in request.allHTTPHeaderFields ?? [:] {
                    outgoing.headers.replaceOrAdd(name: name, value: value)
                    names.insert(name.lowercased())
                }
                for (name, value) in configuration.additionalHeaders where !names.contains(name.lowercased()) {
                    outgoing.headers.replaceOrAdd(name: name, value: value)
                }
                for (name, value) in extraHeaders { outgoing.headers.replaceOrAdd(name: name, value: value) }
                if !outgoing.headers.contains(name: "User-Agent") {
                    outgoing.headers.add(name: "User-Agent", value: "\(ProcessInfo.processInfo.processName) FerryURLSession")
                }
                if request.httpShouldHandleCookies, !outgoing.headers.contains(name: "Cookie"), let cookie = task.session.cookies.header(for: url) {
                    outgoing.headers.add(name: "Cookie", value: cookie)
                }
                switch body {
                case .data(let data):
                    outgoing.body = reported(BodyPieces(data), size: Int64(data.count), task)
                case .file(let file):
                    outgoing.body = try uploadBody(file, task)
                case nil:
                    if let data = request.httpBody { outgoing.body = .bytes(ByteBuffer(data: data)) }
                }
                return try await client.execute(outgoing, timeout: TimeAmount(max(deadline - .now, .zero)))
            } catch {
                let failure = URLErrorMaker.from(error, url: url)
                guard configuration.waitsForConnectivity, URLErrorMaker.waitable(failure), !Task.isCancelled else { throw failure }
                guard ContinuousClock.now + pause < deadline else {
                    throw URLErrorMaker.make(.timedOut, url, "No connection to \(url.host ?? "the server") within the resource timeout (\(Int(configuration.timeoutIntervalForResource)) s).")
                }
                if !told, let delegate = task.session.delegate(for: task) as? URLSessionTaskDelegate {
                    told = true
                    task.session.onDelegateQueue { delegate.urlSession(task.session, taskIsWaitingForConnectivity: task) }
                }
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
            }
        }
    }

    /// A file's bytes as an upload body, read as they are sent, each piece reported.
    private func uploadBody(_ file: URL, _ task: URLSessionTask) throws -> HTTPClientRequest.Body {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value,
            FileManager.default.isReadableFile(atPath: file.path)
        else {
            throw URLErrorMaker.make(.fileDoesNotExist, file, "The upload's file cannot be read: \(file.path).")
        }
        return reported(BodyPieces(file: file, size: size), size: size, task)
    }

    /// The pieces as a body whose every piece is told to the delegate as AsyncHTTPClient takes it
    /// to send (Apple's didSendBodyData: after the bytes leave, not before).
    private func reported(_ pieces: BodyPieces, size: Int64, _ task: URLSessionTask) -> HTTPClientRequest.Body {
        let counted = pieces.map { [self] buffer -> ByteBuffer in
            let count = Int64(buffer.readableBytes)
            task.sent(count, expected: size)
            notifySent(task, count, total: task.countOfBytesSent, expected: size)
            return buffer
        }
        return .stream(counted, length: .known(size))
    }

    private func notifySent(_ task: URLSessionTask, _ bytes: Int64, total: Int64, expected: Int64) {
        guard let delegate = task.session.delegate(for: task) as? URLSessionTaskDelegate else { return }
        task.session.onDelegateQueue { delegate.urlSession(task.session, task: task, didSendBodyData: bytes, totalBytesSent: total, totalBytesExpectedToSend: expected) }
    }

    // MARK: Asking the delegate, ending the task

    /// Asks the task's delegate on the delegate queue and waits for its completion handler;
    /// `otherwise` when the session has no task delegate.
    private func ask<Value: Sendable>(
        _ task: URLSessionTask, _ question: @escaping (URLSessionTaskDelegate, Answer<Value>) -> Void, otherwise: () -> Value
    ) async -> Value {
        guard let delegate = task.session.delegate(for: task) as? URLSessionTaskDelegate else { return otherwise() }
        return await withCheckedContinuation { continuation in
            let answer = Answer(continuation)
            task.session.onDelegateQueue { question(delegate, answer) }
        }
    }

    /// Ends `task`: its completion handler, or its delegate's last messages, on the delegate queue.
    func complete(_ task: URLSessionTask, error: Error?, data: Data? = nil, location: URL? = nil) {
        let id = task.taskIdentifier
        let run = runs.withLock { $0[id] }
        var error = error
        if let run, run.expired.withLock({ $0 }), let cancelled = error as? URLError, cancelled.code == .cancelled {
            // Cancelled by the resource timer, not by the program: a timeout, resume data kept.
            var info = cancelled.userInfo
            info[NSLocalizedDescriptionKey] = "The task did not end within the resource timeout (\(configuration.timeoutIntervalForResource) s)."
            error = URLError(.timedOut, userInfo: info)
        }
        guard task.finish(error: error) else { return }
        run?.timer.withLock { $0 }?.cancel()
        let completion = completions.withLock { $0.removeValue(forKey: id) }
        _ = bodies.withLock { $0.removeValue(forKey: id) }
        _ = resumptions.withLock { $0.removeValue(forKey: id) }
        _ = runs.withLock { $0.removeValue(forKey: id) }
        let session = task.session
        let delegate = session.delegate(for: task)
        session.onDelegateQueue {
            let response = task.response
            switch completion {
            case .data(let handler):
                handler(error == nil ? data ?? Data() : nil, response, error)
            case .download(let handler):
                handler(location, response, error)
            case nil:
                if let location, let download = task as? URLSessionDownloadTask, let delegate = delegate as? URLSessionDownloadDelegate {
                    delegate.urlSession(session, downloadTask: download, didFinishDownloadingTo: location)
                }
                (delegate as? URLSessionTaskDelegate)?.urlSession(session, task: task, didCompleteWithError: error)
            }
            // The temporary file lives as long as the call that hands it over, as on Apple's platforms.
            if let location { try? FileManager.default.removeItem(at: location) }
            session.forget(task)
        }
    }
}

/// Boxes for values that cross to the delegate queue and back: Foundation's URL-loading types are
/// not marked Sendable, though each is used by one side at a time here.
struct RequestBox: @unchecked Sendable {
    let value: URLRequest
    init(_ value: URLRequest) { self.value = value }
}

struct CredentialBox: @unchecked Sendable {
    let value: URLCredential
    init(_ value: URLCredential) { self.value = value }
}

struct CachedBox: @unchecked Sendable {
    let value: CachedURLResponse
    init(_ value: CachedURLResponse) { self.value = value }
}

extension URLSession {
    /// Runs `body` on the delegate queue. Delegates and Foundation's types are not Sendable; the
    /// queue is where Apple's contract says they are used.
    func onDelegateQueue(_ body: @escaping () -> Void) {
        let box = UncheckedBody(body)
        delegateQueue.addOperation { box.body() }
    }
}

struct UncheckedBody: @unchecked Sendable {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// A `Content-Range: bytes START-END/TOTAL` header.
struct ContentRange {
    var start: Int64
    var total: Int64?

    init?(_ header: String?) {
        guard let header, header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst(6).split(separator: "/")
        guard parts.count == 2, let start = parts[0].split(separator: "-").first.flatMap({ Int64($0) }) else { return nil }
        self.start = start
        total = Int64(parts[1])
    }
}

/// The HTTP clients of this process's sessions, one per distinct setting, kept for the process's
/// life: a session may be dropped without being invalidated (Apple's leak; AsyncHTTPClient's
/// crash), and sessions with the same settings share connections.
enum Clients {
    struct Key: Hashable {
        var requestTimeout: Double
        var connectionsPerHost: Int
        var proxy: String?

        init(_ configuration: URLSessionConfiguration) {
            requestTimeout = configuration.timeoutIntervalForRequest
            connectionsPerHost = max(1, configuration.httpMaximumConnectionsPerHost)
            proxy = ProxySettings.url(for: configuration)?.absoluteString
        }
    }

    private static let clients = Mutex<[Key: HTTPClient]>([:])

    static func client(for key: Key, configuration: URLSessionConfiguration? = nil) -> HTTPClient {
        clients.withLock { clients in
            if let client = clients[key] { return client }
            var http = HTTPClient.Configuration()
            http.redirectConfiguration = .disallow  // each redirect is put to the delegate
            http.decompression = .disabled  // a download's bytes on disk are the server's, so Range goes on from them
            // Milliseconds: a timeout under a second must not become none at all.
            http.timeout = .init(connect: .milliseconds(Int64(min(key.requestTimeout, 60) * 1000)), read: .milliseconds(Int64(key.requestTimeout * 1000)))
            http.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = key.connectionsPerHost
            http.connectionPool.retryConnectionEstablishment = false  // a refused connection fails at once, as Apple's does; waitsForConnectivity waits
            http.proxy = configuration.flatMap { ProxySettings.proxy(for: $0) }
            http.tlsConfiguration = TrustSettings.clientConfiguration()
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: http)
            clients[key] = client
            return client
        }
    }
}

/// An upload's body in 64 KiB pieces, each read when the request asks for it: a file is never
/// held in memory whole. Each send (a retry too) reads from the start.
struct BodyPieces: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    fileprivate enum Source: Sendable {
        case data(Data)
        case file(URL, size: Int64)
    }
    private let source: Source

    init(_ data: Data) { source = .data(data) }
    init(file: URL, size: Int64) { source = .file(file, size: size) }

    struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let source: Source
        fileprivate var offset = 0
        fileprivate var handle: FileHandle?

        mutating func next() async throws -> ByteBuffer? {
            switch source {
            case .data(let data):
                guard offset < data.count else { return nil }
                let end = Swift.min(offset + (64 << 10), data.count)
                defer { offset = end }
                return ByteBuffer(data: data[data.startIndex + offset..<data.startIndex + end])
            case .file(let url, let size):
                guard offset < size else {
                    try? handle?.close()
                    return nil
                }
                if handle == nil { handle = try FileHandle(forReadingFrom: url) }
                guard let data = try handle?.read(upToCount: 64 << 10), !data.isEmpty else {
                    throw URLErrorMaker.make(.cannotOpenFile, url, "The upload's file got shorter while it was sent: \(url.path).")
                }
                offset += data.count
                return ByteBuffer(data: data)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: source) }
}
