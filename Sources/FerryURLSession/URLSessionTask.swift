import Synchronization

/// One request of a session, as Apple's `URLSessionTask`: made suspended by the session, started
/// by ``resume()``, paused by ``suspend()``, ended by ``cancel()`` or by its work ending. Its
/// properties may be read from any thread.
open class URLSessionTask: NSObject, @unchecked Sendable {
    public enum State: Int, Sendable {
        case running = 0
        case suspended = 1
        case canceling = 2
        case completed = 3
    }

    public static let defaultPriority: Float = 0.5
    public static let lowPriority: Float = 0.25
    public static let highPriority: Float = 0.75

    // Guarded by the mutex; Foundation's types and the delegate are not marked Sendable.
    struct Fields: @unchecked Sendable {
        var lifecycle = TaskLifecycle()
        var currentRequest: URLRequest?
        var response: URLResponse?
        var error: Error?
        var received: Int64 = 0
        var expectedToReceive: Int64 = NSURLSessionTransferSizeUnknown
        var sent: Int64 = 0
        var expectedToSend: Int64 = NSURLSessionTransferSizeUnknown
        var taskDescription: String?
        var priority = URLSessionTask.defaultPriority
        var earliestBeginDate: Date?
        var delegate: URLSessionTaskDelegate?
    }

    /// Unique in the session; for a background session, the daemon's transfer id, the same in
    /// every run of the program.
    public let taskIdentifier: Int
    /// The request as the task was made with it.
    public let originalRequest: URLRequest?
    /// Counts bytes as the task runs: `totalUnitCount` is the expected size (-1 unknown),
    /// `completedUnitCount` what arrived (sent, for an upload).
    public let progress = Progress(totalUnitCount: -1)

    let fields: Mutex<Fields>
    let session: URLSession
    /// Who does the work: this process, or the daemon.
    let transport: any TaskTransport

    init(session: URLSession, identifier: Int, request: URLRequest?, transport: any TaskTransport, lifecycle: TaskLifecycle = TaskLifecycle()) {
        self.session = session
        self.taskIdentifier = identifier
        self.originalRequest = request
        self.transport = transport
        fields = Mutex(Fields(lifecycle: lifecycle, currentRequest: request))
        super.init()
    }

    /// The request being made now (after redirects: the last one).
    open var currentRequest: URLRequest? { fields.withLock { $0.currentRequest } }
    /// The server's answer, once its head arrived.
    open var response: URLResponse? { fields.withLock { $0.response } }
    /// Why the task failed, once it has; nil while running or after a success.
    open var error: Error? { fields.withLock { $0.error } }
    open var state: State { fields.withLock { $0.lifecycle.state } }
    open var countOfBytesReceived: Int64 { fields.withLock { $0.received } }
    open var countOfBytesExpectedToReceive: Int64 { fields.withLock { $0.expectedToReceive } }
    open var countOfBytesSent: Int64 { fields.withLock { $0.sent } }
    open var countOfBytesExpectedToSend: Int64 { fields.withLock { $0.expectedToSend } }
    /// Kept for source compatibility (a scheduling hint on Apple's platforms).
    open var countOfBytesClientExpectsToSend: Int64 = NSURLSessionTransferSizeUnknown
    open var countOfBytesClientExpectsToReceive: Int64 = NSURLSessionTransferSizeUnknown
    /// A label of your choosing (a background task's is kept by the daemon across runs).
    open var taskDescription: String? {
        get { fields.withLock { $0.taskDescription } }
        set {
            let running = fields.withLock { fields in
                fields.taskDescription = newValue
                return fields.lifecycle.started && fields.lifecycle.state != .completed
            }
            // Before resume() the label goes with the start; after it, on its own.
            if running { transport.relabel(self) }
        }
    }
    /// 0 to 1; a background task of 0.75 or more is queued ahead of others, 0.25 or less behind.
    open var priority: Float {
        get { fields.withLock { $0.priority } }
        set { fields.withLock { $0.priority = min(max(newValue, 0), 1) } }
    }
    /// The task starts no earlier than this (set before ``resume()``).
    open var earliestBeginDate: Date? {
        get { fields.withLock { $0.earliestBeginDate } }
        set { fields.withLock { $0.earliestBeginDate = newValue } }
    }
    /// A delegate for this task's messages instead of the session's.
    open var delegate: URLSessionTaskDelegate? {
        get { fields.withLock { $0.delegate } }
        set { fields.withLock { $0.delegate = newValue } }
    }
    /// Kept for source compatibility.
    open var prefersIncrementalDelivery = true

    /// Starts the task, or continues it after ``suspend()``.
    open func resume() {
        let action = fields.withLock { $0.lifecycle.resume() }
        switch action {
        case .start: transport.start(self)
        case .unpause: transport.unpause(self)
        default: break
        }
    }

    /// Pauses a running task; ``resume()`` continues it.
    open func suspend() {
        if fields.withLock({ $0.lifecycle.suspend() }) == .pause { transport.pause(self) }
    }

    /// Ends the task: its delegate hears `didCompleteWithError` with `URLError.cancelled`.
    open func cancel() {
        stop(producingResumeData: nil)
    }

    func stop(producingResumeData: (@Sendable (Data?) -> Void)?) {
        guard case .stop(let started) = fields.withLock({ $0.lifecycle.cancel() }) else {
            producingResumeData?(nil)
            return
        }
        transport.stop(self, started: started, producingResumeData: producingResumeData)
    }

    /// Records the end of the work; false when it had already been recorded.
    func finish(error: Error?) -> Bool {
        fields.withLock { fields in
            guard fields.lifecycle.finish() else { return false }
            fields.error = error
            return true
        }
    }

    func received(_ count: Int64, expected: Int64?) {
        let (total, expectedTotal) = fields.withLock { fields in
            fields.received += count
            if let expected { fields.expectedToReceive = expected }
            return (fields.received, fields.expectedToReceive)
        }
        progress.totalUnitCount = expectedTotal
        progress.completedUnitCount = total
    }

    func sent(_ count: Int64, expected: Int64) {
        let total = fields.withLock { fields in
            fields.sent += count
            fields.expectedToSend = expected
            return fields.sent
        }
        progress.totalUnitCount = expected
        progress.completedUnitCount = total
    }

    open override var description: String {
        "<\(type(of: self)) \(taskIdentifier) \(originalRequest?.url?.absoluteString ?? "")>"
    }
}

/// A task whose answer arrives in memory: to a completion handler, or piece by piece to
/// `urlSession(_:dataTask:didReceive:)`.
open class URLSessionDataTask: URLSessionTask, @unchecked Sendable {}

/// A task that sends a body (a file or data) and receives the answer as a data task does.
open class URLSessionUploadTask: URLSessionDataTask, @unchecked Sendable {
    /// Cancels the upload and hands its resume data to `completionHandler`: in a background
    /// session, when the server took it as a resumable upload (IETF or tus), so that
    /// ``URLSession/uploadTask(withResumeData:)`` goes on from the server's offset; nil otherwise
    /// (a local session sends an upload in one request). Then the delegate hears
    /// `didCompleteWithError` with `URLError.cancelled` and the same data in its `userInfo`.
    open func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) {
        stop(producingResumeData: completionHandler)
    }
}

/// A task whose answer is written to a temporary file, handed to
/// `urlSession(_:downloadTask:didFinishDownloadingTo:)`.
open class URLSessionDownloadTask: URLSessionTask, @unchecked Sendable {
    /// Cancels the download and hands its resume data to `completionHandler` (nil when it cannot
    /// go on: no bytes yet, or a server without `Range` and a validator); then the delegate hears
    /// `didCompleteWithError` with `URLError.cancelled` and the same data in its `userInfo`.
    open func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) {
        stop(producingResumeData: completionHandler)
    }
}

/// Who does a task's work: ``LocalTransport`` in this process, or the daemon for a background
/// session. It is told what ``TaskLifecycle`` decided.
protocol TaskTransport: Sendable {
    func start(_ task: URLSessionTask)
    func pause(_ task: URLSessionTask)
    func unpause(_ task: URLSessionTask)
    func stop(_ task: URLSessionTask, started: Bool, producingResumeData: (@Sendable (Data?) -> Void)?)
    /// The task's `taskDescription` changed after it started.
    func relabel(_ task: URLSessionTask)
}

extension TaskTransport {
    /// A label kept in this process only needs nothing more.
    func relabel(_ task: URLSessionTask) {}
}
