import FerryKit
import Synchronization

/// Runs a background session's download tasks in the Ferry daemon, through FerryKit's
/// ``BackgroundSession``: a task is a transfer of the daemon's session with the configuration's
/// identifier, made paused (as a task is made suspended) and resumed by `resume()`; its
/// `taskIdentifier` is the transfer's id, the same in every run of the program.
///
/// The daemon's events for the session become delegate messages. Those of tasks that ended while
/// no run of the program listened are delivered first, when the session is made again: for each,
/// `didFinishDownloadingTo` and `didCompleteWithError`, then `urlSessionDidFinishEvents`. Each
/// ended task's messages and the daemon's acknowledgement of its events happen in one operation
/// of the delegate queue, so an event is delivered once across runs (unless the program dies
/// inside that operation, when the next run gets it again).
final class BackgroundTransport: TaskTransport {
    /// The daemon's session name: the identifier with what the daemon does not accept replaced.
    let identifier: String
    /// Where the daemon places finished files until `didFinishDownloadingTo` has run.
    let folder: URL
    private let connection: Task<BackgroundSession, Error>

    private struct State: @unchecked Sendable {
        weak var session: URLSession?
        /// Bytes reported by `didWriteData`, per task.
        var reported: [Int: Int64] = [:]
        /// Tasks made from resume data: their blob, until `resume()` hands it to the daemon;
        /// then their first `resumed` event becomes `didResumeAtOffset`.
        var blobs: [Int: Data] = [:]
        var resuming: Set<Int> = []
        var toldWaiting: Set<Int> = []
        /// Tasks this run cancels: their end is this run's to report (with the resume data),
        /// not the daemon's `cancelled` event's.
        var stopping: Set<Int> = []
        /// When this run made each task object: a `cancelled` event older than that is about the
        /// task's earlier life (one cancelled with resume data, made again from it).
        var madeAt: [Int: Date] = [:]
        /// Tasks that could not be made in the daemon: they fail when resumed.
        var failures: [Int: URLError] = [:]
        var delivery: Task<Void, Never>?
    }

    private let state = Mutex(State())

    init(configuration: URLSessionConfiguration) {
        let raw = configuration.identifier ?? "urlsession"
        let name = String(raw.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" }.prefix(64))
        identifier = name.isEmpty ? "urlsession" : name
        let cache = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        folder = cache.appendingPathComponent("ferry/urlsession").appendingPathComponent(identifier)
        let identifier = identifier
        let launches = configuration.sessionSendsLaunchEvents
        let settings = configuration.ferryDaemon
        // The configuration's constraints become the daemon's session's: they hold its tasks
        // whether or not the program runs.
        var constraints = TransferOptions()
        var cleared: [String] = []
        if configuration.allowsExpensiveNetworkAccess { cleared.append("allowsMeteredNetwork") } else { constraints.allowsMeteredNetwork = false }
        if configuration.isDiscretionary { constraints.discretionary = true } else { cleared.append("discretionary") }
        let update = TransferOptionsUpdate(set: constraints, clear: cleared)
        connection = Task { [settings] in
            var settings = settings
            // Without its arguments: they may say "start a download", which must not run again.
            // The daemon sets FERRY_SESSION, so the program knows why it runs.
            if launches { settings.launchOnEvents = .thisProgram(arguments: []) }
            let session = try await BackgroundSession(identifier: identifier, configuration: settings)
            try await session.updateTransferOptions(update)
            return session
        }
    }

    /// Starts delivering the daemon's events for the session to `session`'s delegate.
    func attach(to session: URLSession) {
        state.withLock { $0.session = session }
        let delivery = Task { await self.deliverEvents() }
        state.withLock { $0.delivery = delivery }
    }

    func detach() {
        state.withLock { $0.delivery }?.cancel()
    }

    // MARK: Making tasks

    func downloadTask(session: URLSession, fallback: Int, request: URLRequest) -> URLSessionDownloadTask {
        guard let url = request.url else {
            return failing(session, fallback, request, URLErrorMaker.make(.badURL, nil, "The request has no URL."))
        }
        let create = CreateTransfersRequest(
            urls: [url.absoluteString], session: identifier, force: true, options: Self.options(request, session.configuration),
            directory: folder.path, filename: "FerryURLSession_\(UUID().uuidString).tmp", overwrite: true, createDirectory: true,
            paused: true
        )
        switch Blocking.run({ try await self.daemon { try await $0.createTransfers(create) } }) {
        case .success(let list):
            guard let transfer = list.transfers.first else {
                return failing(session, fallback, request, URLErrorMaker.make(.badServerResponse, url, "The Ferry daemon made no transfer."))
            }
            return URLSessionDownloadTask(session: session, identifier: Int(transfer.id), request: request, transport: self)
        case .failure(let error):
            return failing(session, fallback, request, Self.urlError(error, url: url))
        }
    }

    /// An upload of a file in the daemon: it reads the file as it sends it, and resumes where the
    /// server speaks tus or the IETF resumable upload protocol.
    func uploadTask(session: URLSession, fallback: Int, request: URLRequest, file: URL) -> URLSessionUploadTask {
        guard let url = request.url else {
            state.withLock { $0.failures[fallback] = URLErrorMaker.make(.badURL, nil, "The request has no URL.") }
            return URLSessionUploadTask(session: session, identifier: fallback, request: request, transport: self)
        }
        let create = CreateUploadRequest(
            file: file.standardizedFileURL.path, url: url.absoluteString, method: request.httpMethod?.uppercased() == "POST" ? "POST" : "PUT",
            session: identifier, options: Self.options(request, session.configuration), paused: true
        )
        switch Blocking.run({ try await self.daemon { try await $0.upload(create) } }) {
        case .success(let list) where !list.transfers.isEmpty:
            return URLSessionUploadTask(session: session, identifier: Int(list.transfers[0].id), request: request, transport: self)
        case .success:
            state.withLock { $0.failures[fallback] = URLErrorMaker.make(.badServerResponse, url, "The Ferry daemon made no transfer.") }
        case .failure(let error):
            let failure = (error as? FerryError)?.code == .invalidRequest
                ? URLErrorMaker.make(.fileDoesNotExist, file, Self.message(error)) : Self.urlError(error, url: url)
            state.withLock { $0.failures[fallback] = failure }
        }
        return URLSessionUploadTask(session: session, identifier: fallback, request: request, transport: self)
    }

    func downloadTask(session: URLSession, fallback: Int, resumeData: Data) -> URLSessionDownloadTask {
        guard let blob = try? ResumeData(blob: resumeData), blob.session == identifier else {
            return failing(
                session, fallback, nil,
                URLErrorMaker.make(.cannotWriteToFile, nil, "The resume data was not made by a download of the background session '\(identifier)'.")
            )
        }
        let request = URL(string: blob.url).map { URLRequest(url: $0) }
        remember(resumeData, of: blob)
        return URLSessionDownloadTask(session: session, identifier: Int(blob.transferId), request: request, transport: self)
    }

    /// An upload that goes on from the server's offset, made from a background upload's resume
    /// data: the daemon asks the server where it stands and sends the rest of the file.
    func uploadTask(session: URLSession, fallback: Int, resumeData: Data) -> URLSessionUploadTask {
        guard let blob = try? ResumeData(blob: resumeData), blob.session == identifier else {
            state.withLock {
                $0.failures[fallback] = URLErrorMaker.make(
                    .cannotWriteToFile, nil, "The resume data was not made by an upload of the background session '\(identifier)'."
                )
            }
            return URLSessionUploadTask(session: session, identifier: fallback, request: nil, transport: self)
        }
        let request = URL(string: blob.url).map { URLRequest(url: $0) }
        remember(resumeData, of: blob)
        return URLSessionUploadTask(session: session, identifier: Int(blob.transferId), request: request, transport: self)
    }

    private func remember(_ resumeData: Data, of blob: ResumeData) {
        state.withLock { state in
            state.blobs[Int(blob.transferId)] = resumeData
            state.stopping.remove(Int(blob.transferId))
            state.madeAt[Int(blob.transferId)] = Date()
        }
    }

    private func failing(_ session: URLSession, _ identifier: Int, _ request: URLRequest?, _ error: URLError) -> URLSessionDownloadTask {
        state.withLock { $0.failures[identifier] = error }
        return URLSessionDownloadTask(session: session, identifier: identifier, request: request, transport: self)
    }

    /// The daemon's unfinished tasks of the session, made into task objects when this run has
    /// none for them yet (``URLSession/getAllTasks(completionHandler:)`` lists them, as iOS does
    /// after a relaunch).
    func adoptUnfinishedTasks(into session: URLSession) {
        guard case .success(let list) = Blocking.run({ try await self.daemon { try await $0.transfers(session: self.identifier) } }) else { return }
        for transfer in list.transfers where [.queued, .running, .waiting, .paused].contains(transfer.state) {
            _ = adopt(transfer, into: session)
        }
    }

    private func adopt(_ transfer: Transfer, into session: URLSession) -> URLSessionTask {
        let id = Int(transfer.id)
        if let known = session.state.withLock({ $0.tasks[id] }) { return known }
        let request = URL(string: transfer.url).map { URLRequest(url: $0) }
        let lifecycle = TaskLifecycle(adopted: transfer.state == .paused ? .suspended : .running)
        let task: URLSessionTask = transfer.kind == .upload
            ? URLSessionUploadTask(session: session, identifier: id, request: request, transport: self, lifecycle: lifecycle)
            : URLSessionDownloadTask(session: session, identifier: id, request: request, transport: self, lifecycle: lifecycle)
        task.taskDescription = transfer.taskDescription
        task.fields.withLock {
            $0.received = transfer.bytesReceived
            $0.expectedToReceive = transfer.totalBytes ?? NSURLSessionTransferSizeUnknown
        }
        session.adopt(task)
        return task
    }

    // MARK: TaskTransport

    func start(_ task: URLSessionTask) {
        let id = task.taskIdentifier
        if let failure = state.withLock({ $0.failures.removeValue(forKey: id) }) {
            end(task, error: failure)
            return
        }
        let blob = state.withLock { state -> Data? in
            guard let blob = state.blobs.removeValue(forKey: id) else { return nil }
            state.resuming.insert(id)
            return blob
        }
        let priority = task.priority
        let label = task.taskDescription
        let earliest = task.earliestBeginDate
        // Waited for: a program that resumes a task and exits at once leaves it running.
        let started = Blocking.run { [self] in
            if let blob {
                _ = try await daemon { try await $0.createTransfers(CreateTransfersRequest(resumeData: blob.base64EncodedString(), session: self.identifier)) }
            } else {
                if priority != URLSessionTask.defaultPriority || label != nil {
                    let rank: TransferPriority? = priority == URLSessionTask.defaultPriority ? nil : priority >= 0.75 ? .high : priority <= 0.25 ? .low : .normal
                    _ = try await daemon { try await $0.update(Int64(id), TransferUpdate(priority: rank, taskDescription: label)) }
                }
                if let date = earliest, date > Date() {
                    // The API's dates are whole seconds: rounded up, so never before.
                    let second = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.up))
                    _ = try await daemon { try await $0.resume(Int64(id), startAfter: second) }
                } else {
                    _ = try await daemon { try await $0.resume(Int64(id)) }
                }
            }
        }
        if case .failure(let error) = started {
            let failure = blob == nil
                ? Self.urlError(error, url: task.originalRequest?.url)
                : URLErrorMaker.make(.cannotWriteToFile, task.originalRequest?.url, "The daemon cannot go on from this resume data: \(Self.message(error))")
            end(task, error: failure)
        }
    }

    /// Kept by the daemon, so the next run's task has it; waited for, as resume() is, so that
    /// two labels set one after the other arrive in that order.
    func relabel(_ task: URLSessionTask) {
        let id = Int64(task.taskIdentifier)
        let label = task.taskDescription ?? ""
        _ = Blocking.run { [self] in try await daemon { try await $0.update(id, TransferUpdate(taskDescription: label)) } }
    }

    func pause(_ task: URLSessionTask) {
        _ = Blocking.run { [self] in try await daemon { try await $0.pause(Int64(task.taskIdentifier)) } }
    }

    func unpause(_ task: URLSessionTask) {
        _ = Blocking.run { [self] in try await daemon { try await $0.resume(Int64(task.taskIdentifier)) } }
    }

    func stop(_ task: URLSessionTask, started: Bool, producingResumeData: (@Sendable (Data?) -> Void)?) {
        let id = Int64(task.taskIdentifier)
        let url = task.originalRequest?.url
        let made = state.withLock { state in
            state.stopping.insert(task.taskIdentifier)
            return state.failures.removeValue(forKey: task.taskIdentifier) == nil && state.blobs.removeValue(forKey: task.taskIdentifier) == nil
        }
        // The daemon is told before cancel() returns; the delegate hears of it on its queue.
        let blob = Blocking.run { [self] () -> Data? in
            guard made else { return nil }
            _ = try? await daemon { try await $0.cancel(id, keepResumeData: producingResumeData != nil) }
            guard producingResumeData != nil else { return nil }
            return try? await daemon { try await $0.resumeData(id) }
        }
        let data = try? blob.get()
        if let producingResumeData { task.session.onDelegateQueue { producingResumeData(data) } }
        end(task, error: URLErrorMaker.cancelled(url, resumeData: data))
    }

    // MARK: Events

    private func deliverEvents() async {
        guard let background = try? await connection.value else { return }
        do {
            var ended = 0
            for event in try await background.missedEvents() where await handle(event, replayed: true) { ended += 1 }
            if ended > 0, let session = state.withLock({ $0.session }) {
                let delegate = session.delegate
                await session.onDelegateQueueAndWait { delegate?.urlSessionDidFinishEvents(forBackgroundURLSession: session) }
            }
            for try await event in background.events { _ = await handle(event, replayed: false) }
        } catch {
            // The session's events could not be read (its token refused): nothing more arrives.
        }
    }

    /// One daemon event as delegate messages; true when it ended a task.
    private func handle(_ event: DownloadEvent, replayed: Bool) async -> Bool {
        guard let session = state.withLock({ $0.session }) else { return false }
        let id = Int(event.taskIdentifier)
        var task = session.state.withLock { $0.tasks[id] }
        switch event.kind {
        case .didCancel where isStale(event), .didRemove where isStale(event):
            await acknowledge(event, session)
            return false
        case .didFinish, .didFail, .didCancel, .didRemove:
            if task == nil, let transfer = try? await daemon({ try await $0.transfer(event.taskIdentifier) }) {
                task = adopt(transfer, into: session)
            }
            guard let task else {
                await acknowledge(event, session)
                return false
            }
            await finish(task, event, session)
            return true
        case .didWriteData(let total, let expected) where task is URLSessionUploadTask:
            guard !replayed, let task else { return false }
            let previous = state.withLock { state -> Int64 in
                defer { state.reported[id] = total }
                return state.reported[id] ?? 0
            }
            task.sent(total - previous, expected: expected ?? NSURLSessionTransferSizeUnknown)
            if let delegate = session.delegate(for: task) as? URLSessionTaskDelegate, total > previous {
                session.onDelegateQueue {
                    delegate.urlSession(session, task: task, didSendBodyData: total - previous, totalBytesSent: total, totalBytesExpectedToSend: expected ?? NSURLSessionTransferSizeUnknown)
                }
            }
        case .didWriteData(let total, let expected):
            guard !replayed, let task = task as? URLSessionDownloadTask else { return false }
            let previous = state.withLock { state -> Int64 in
                defer { state.reported[id] = total }
                return state.reported[id] ?? task.countOfBytesReceived
            }
            task.fields.withLock {
                $0.received = total
                if let expected { $0.expectedToReceive = expected }
            }
            task.received(0, expected: expected)
            if let delegate = session.delegate(for: task) as? URLSessionDownloadDelegate, total > previous {
                session.onDelegateQueue {
                    delegate.urlSession(session, downloadTask: task, didWriteData: total - previous, totalBytesWritten: total, totalBytesExpectedToWrite: expected ?? NSURLSessionTransferSizeUnknown)
                }
            }
        case .didResume(let offset):
            guard let task = task as? URLSessionDownloadTask, state.withLock({ $0.resuming.remove(id) != nil }) else { return false }
            state.withLock { $0.reported[id] = offset }
            if let delegate = session.delegate(for: task) as? URLSessionDownloadDelegate {
                let expected = task.countOfBytesExpectedToReceive
                session.onDelegateQueue { delegate.urlSession(session, downloadTask: task, didResumeAtOffset: offset, expectedTotalBytes: expected) }
            }
        case .isWaiting:
            guard !replayed, let task, state.withLock({ $0.toldWaiting.insert(id).inserted }),
                let delegate = session.delegate(for: task) as? URLSessionTaskDelegate
            else { return false }
            session.onDelegateQueue { delegate.urlSession(session, taskIsWaitingForConnectivity: task) }
        default:
            break
        }
        return false
    }

    /// A cancellation this run made itself, or one of the task's earlier life.
    private func isStale(_ event: DownloadEvent) -> Bool {
        state.withLock { state in
            let id = Int(event.taskIdentifier)
            return state.stopping.contains(id) || state.madeAt[id].map { event.date < $0 } == true
        }
    }

    /// An ended task's last messages and the acknowledgement of its events, in one operation.
    private func finish(_ task: URLSessionTask, _ event: DownloadEvent, _ session: URLSession) async {
        var error: URLError?
        var location: URL?
        var answer: Data?
        /// The last of an upload's body not yet told (a quick upload ends between two progress
        /// events): Apple's last didSendBodyData says all of it.
        var unsent: (bytes: Int64, total: Int64)?
        switch event.kind {
        case .didFinish where task is URLSessionUploadTask:
            // The server's answer, as the daemon kept it (its status, headers and body's start).
            let transfer = try? await daemon({ try await $0.transfer(event.taskIdentifier) })
            if let transfer, let kept = transfer.response, let url = task.originalRequest?.url {
                let response = HTTPURLResponse(url: url, statusCode: kept.status, httpVersion: "HTTP/1.1", headerFields: kept.headers)
                task.fields.withLock { $0.response = response }
                answer = kept.body.map { Data($0.utf8) }
            }
            if let size = transfer?.totalBytes {
                let told = state.withLock { $0.reported[task.taskIdentifier] ?? 0 }
                if size > told {
                    task.sent(size - told, expected: size)
                    unsent = (size - told, size)
                }
            }
        case .didFinish(let file, _):
            location = file
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
            if let url = task.originalRequest?.url {
                let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": String(size)])
                task.fields.withLock {
                    $0.response = response
                    $0.received = size
                    $0.expectedToReceive = size
                }
            }
        case .didFail(let failure):
            let blob = try? await daemon { try await $0.resumeData(event.taskIdentifier) }
            error = Self.urlError(failure, url: task.originalRequest?.url, resumeData: blob)
        default:
            error = URLErrorMaker.cancelled(task.originalRequest?.url)
        }
        guard task.finish(error: error) else {
            await acknowledge(event, session)
            return
        }
        let delegate = session.delegate(for: task)
        await session.onDelegateQueueAndWait {
            if let unsent {
                (delegate as? URLSessionTaskDelegate)?.urlSession(session, task: task, didSendBodyData: unsent.bytes, totalBytesSent: unsent.total, totalBytesExpectedToSend: unsent.total)
            }
            if let location, let download = task as? URLSessionDownloadTask {
                (delegate as? URLSessionDownloadDelegate)?.urlSession(session, downloadTask: download, didFinishDownloadingTo: location)
                try? FileManager.default.removeItem(at: location)
            }
            if let answer, !answer.isEmpty, let upload = task as? URLSessionUploadTask {
                (delegate as? URLSessionDataDelegate)?.urlSession(session, dataTask: upload, didReceive: answer)
            }
            (delegate as? URLSessionTaskDelegate)?.urlSession(session, task: task, didCompleteWithError: error)
            if let seq = event.seq { _ = Blocking.run { try await self.acknowledgeEvents(through: seq) } }
        }
        state.withLock { state in
            state.reported[task.taskIdentifier] = nil
            state.toldWaiting.remove(task.taskIdentifier)
        }
        session.forget(task)
    }

    /// Ends a task this run stopped or could not start (its daemon events, if any, are then
    /// acknowledged as they arrive).
    private func end(_ task: URLSessionTask, error: URLError) {
        let error = URLErrorMaker.keyed(error, for: task)
        guard task.finish(error: error) else { return }
        let session = task.session
        let delegate = session.delegate(for: task)
        session.onDelegateQueue {
            (delegate as? URLSessionTaskDelegate)?.urlSession(session, task: task, didCompleteWithError: error)
            session.forget(task)
        }
    }

    private func acknowledge(_ event: DownloadEvent, _ session: URLSession) async {
        guard let seq = event.seq else { return }
        try? await acknowledgeEvents(through: seq)
    }

    private func acknowledgeEvents(through seq: Int64) async throws {
        try await connection.value.acknowledge(through: seq)
    }

    // MARK: Plumbing

    private func daemon<Result: Sendable>(_ body: (DaemonClient) async throws -> Result) async throws -> Result {
        try await connection.value.withDaemon(body)
    }

    /// The request's headers and the configuration's limits as the daemon's options.
    static func options(_ request: URLRequest, _ configuration: URLSessionConfiguration) -> TransferOptions {
        var headers: [String: String] = [:]
        for (name, value) in configuration.additionalHeaders { headers[name] = value }
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers[name] = value }
        var options = TransferOptions()
        options.headers = headers.isEmpty ? nil : headers
        options.idleTimeoutSeconds = configuration.timeoutIntervalForRequest
        options.resourceTimeoutSeconds = configuration.timeoutIntervalForResource
        options.maxConnectionsPerHost = configuration.httpMaximumConnectionsPerHost
        // The environment's proxy is the daemon's own business; the dictionary is the program's.
        if configuration.connectionProxyDictionary != nil {
            options.proxy = ProxySettings.url(for: configuration, environment: [:])?.absoluteString
        }
        return options
    }

    static func message(_ error: Error) -> String {
        (error as? FerryError)?.message ?? "\(error)"
    }

    /// A daemon's failure as the `URLError` Apple's URLSession gives for the same cause.
    static func urlError(_ error: Error, url: URL?, resumeData: Data? = nil) -> URLError {
        guard let failure = error as? FerryError else { return URLErrorMaker.from(error, url: url, resumeData: resumeData) }
        let code: URLError.Code =
            switch failure.code {
            case .invalidURL: .badURL
            case .unsupportedScheme: .unsupportedURL
            case .daemonUnreachable, .daemonStartFailed: .cannotConnectToHost
            case .connectionFailed: failure.message.lowercased().contains("resolve") || failure.message.lowercased().contains("dns") ? .cannotFindHost : .cannotConnectToHost
            case .timeout: .timedOut
            case .untrustedCertificate: .serverCertificateUntrusted
            case .tooManyRedirects: .httpTooManyRedirects
            case .redirectRefused: .unsupportedURL
            case .diskFull, .fileSystem: .cannotWriteToFile
            case .resumeDataInvalid, .resumeDataStale: .cannotWriteToFile
            case .cancelled: .cancelled
            default: .badServerResponse
            }
        return URLErrorMaker.make(code, url, failure.message, resumeData: resumeData)
    }
}

/// Waits on this thread for async work: task creation is synchronous in Apple's API, and a
/// background task's identifier is the daemon's. The work runs on a queue of its own, not Swift's
/// cooperative threads: a caller blocking one of those (code in an async function making tasks,
/// as many at once as there are cores) would otherwise leave none for the work it waits for.
enum Blocking {
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, Error> {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, Error>?>(nil)
        Task.detached(executorPreference: QueueExecutor.shared) {
            do {
                let value = try await body()
                result.withLock { $0 = .success(value) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }!
    }
}

/// A task executor on a Dispatch queue, outside the cooperative pool.
final class QueueExecutor: TaskExecutor {
    static let shared = QueueExecutor()
    private let queue = DispatchQueue(label: "FerryURLSession.blocking", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

extension URLSession {
    /// ``onDelegateQueue(_:)``, waiting until `body` has run.
    func onDelegateQueueAndWait(_ body: @escaping () -> Void) async {
        let box = UncheckedBody(body)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            delegateQueue.addOperation {
                box.body()
                continuation.resume()
            }
        }
    }
}
