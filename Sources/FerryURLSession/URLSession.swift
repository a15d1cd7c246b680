import Synchronization

/// Apple's `URLSession`, on Linux: makes tasks from a configuration, runs them (in this process,
/// or in the Ferry daemon for a background configuration) and tells its delegate about them on
/// its delegate queue, in Apple's order.
///
/// Like Apple's, a session holds its delegate strongly until it is invalidated
/// (``finishTasksAndInvalidate()`` or ``invalidateAndCancel()``); ``shared`` never is.
open class URLSession: NSObject, @unchecked Sendable {
    public enum AuthChallengeDisposition: Int, Sendable {
        case useCredential = 0
        case performDefaultHandling = 1
        case cancelAuthenticationChallenge = 2
        case rejectProtectionSpace = 3
    }

    public enum ResponseDisposition: Int, Sendable {
        case cancel = 0
        case allow = 1
        case becomeDownload = 2
        case becomeStream = 3
    }

    public enum DelayedRequestDisposition: Int, Sendable {
        case continueLoading = 0
        case useNewRequest = 1
        case cancel = 2
    }

    /// A session with the default configuration and no delegate.
    public static let shared = URLSession(configuration: .default)

    /// A copy of the configuration the session was made with.
    public let configuration: URLSessionConfiguration
    /// Where delegate methods and completion handlers run: the queue given, or a serial queue
    /// of the session's own.
    public let delegateQueue: OperationQueue
    /// A label of your choosing.
    open var sessionDescription: String? {
        get { state.withLock { $0.description } }
        set { state.withLock { $0.description = newValue } }
    }
    /// The delegate, until the session is invalidated.
    open var delegate: URLSessionDelegate? { state.withLock { $0.delegate } }

    // Guarded by the mutex; Foundation's types and the delegate are not marked Sendable.
    struct State: @unchecked Sendable {
        var delegate: URLSessionDelegate?
        var description: String?
        var nextIdentifier = 1
        /// Tasks made and not yet ended.
        var tasks: [Int: URLSessionTask] = [:]
        var invalidating = false
        var invalidated = false
    }

    let state: Mutex<State>
    let cookies: SessionCookies
    /// Runs this process's tasks (every task of a default or ephemeral session, and the data
    /// tasks of a background one).
    let local: LocalTransport
    /// The daemon's side, for a background session.
    let background: BackgroundTransport?

    /// A session without a delegate: use tasks with completion handlers, or the async methods.
    public convenience init(configuration: URLSessionConfiguration) {
        self.init(configuration: configuration, delegate: nil, delegateQueue: nil)
    }

    /// A session whose delegate hears about its tasks on `queue` (nil: a serial queue of its own).
    public init(configuration: URLSessionConfiguration, delegate: URLSessionDelegate?, delegateQueue queue: OperationQueue?) {
        let configuration = configuration.copy() as! URLSessionConfiguration
        self.configuration = configuration
        if let queue {
            delegateQueue = queue
        } else {
            delegateQueue = OperationQueue()
            delegateQueue.maxConcurrentOperationCount = 1
            delegateQueue.name = "FerryURLSession delegate queue"
        }
        // A background session's download tasks take the daemon's ids; its tasks run here count
        // from far above them.
        state = Mutex(State(delegate: delegate, nextIdentifier: configuration.kind == .background ? 1 << 40 : 1))
        cookies = SessionCookies(configuration)
        local = LocalTransport(configuration: configuration)
        background = configuration.kind == .background ? BackgroundTransport(configuration: configuration) : nil
        super.init()
        background?.attach(to: self)
    }

    // MARK: Data tasks

    open func dataTask(with url: URL) -> URLSessionDataTask {
        dataTask(with: URLRequest(url: url))
    }

    open func dataTask(with request: URLRequest) -> URLSessionDataTask {
        make { URLSessionDataTask(session: self, identifier: $0, request: self.prepared(request), transport: self.local) }
    }

    /// A data task whose answer goes to `completionHandler` on the delegate queue, not to the
    /// delegate (challenges still go to the delegate).
    open func dataTask(with url: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, Error?) -> Void) -> URLSessionDataTask {
        dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
    }

    open func dataTask(with request: URLRequest, completionHandler: @escaping @Sendable (Data?, URLResponse?, Error?) -> Void) -> URLSessionDataTask {
        let task = dataTask(with: request)
        local.completions.withLock { $0[task.taskIdentifier] = .data(completionHandler) }
        return task
    }

    // MARK: Upload tasks

    /// In a background session the daemon sends the file, and the task outlives the program.
    open func uploadTask(with request: URLRequest, fromFile fileURL: URL) -> URLSessionUploadTask {
        if let background { return make { background.uploadTask(session: self, fallback: $0, request: self.prepared(request), file: fileURL) } }
        return upload(request, body: .file(fileURL))
    }

    open func uploadTask(with request: URLRequest, from bodyData: Data) -> URLSessionUploadTask {
        upload(request, body: .data(bodyData))
    }

    open func uploadTask(
        with request: URLRequest, fromFile fileURL: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, Error?) -> Void
    ) -> URLSessionUploadTask {
        let task = uploadTask(with: request, fromFile: fileURL)
        local.completions.withLock { $0[task.taskIdentifier] = .data(completionHandler) }
        return task
    }

    open func uploadTask(
        with request: URLRequest, from bodyData: Data?, completionHandler: @escaping @Sendable (Data?, URLResponse?, Error?) -> Void
    ) -> URLSessionUploadTask {
        let task = upload(request, body: .data(bodyData ?? Data()))
        local.completions.withLock { $0[task.taskIdentifier] = .data(completionHandler) }
        return task
    }

    /// An upload that goes on from where a cancelled or failed one stopped
    /// (``URLSessionUploadTask/cancel(byProducingResumeData:)``, or the error's
    /// `uploadTaskResumeData`): the daemon asks the server for its offset and sends the rest.
    /// Only a background session makes such data; data that cannot be used (not Ferry's, another
    /// session's, its file gone) makes a task that fails with `URLError.cannotWriteToFile` when
    /// resumed, as a download's does.
    open func uploadTask(withResumeData resumeData: Data) -> URLSessionUploadTask {
        if let background { return make { background.uploadTask(session: self, fallback: $0, resumeData: resumeData) } }
        return make {
            let task = URLSessionUploadTask(session: self, identifier: $0, request: nil, transport: self.local)
            self.local.resumptions.withLock { $0[task.taskIdentifier] = .invalid }
            return task
        }
    }

    open func uploadTask(withResumeData resumeData: Data, completionHandler: @escaping @Sendable (Data?, URLResponse?, Error?) -> Void) -> URLSessionUploadTask {
        let task = uploadTask(withResumeData: resumeData)
        local.completions.withLock { $0[task.taskIdentifier] = .data(completionHandler) }
        return task
    }

    private func upload(_ request: URLRequest, body: LocalTransport.Body) -> URLSessionUploadTask {
        make {
            let task = URLSessionUploadTask(session: self, identifier: $0, request: self.prepared(request), transport: self.local)
            self.local.bodies.withLock { $0[task.taskIdentifier] = body }
            return task
        }
    }

    // MARK: Download tasks

    open func downloadTask(with url: URL) -> URLSessionDownloadTask {
        downloadTask(with: URLRequest(url: url))
    }

    open func downloadTask(with request: URLRequest) -> URLSessionDownloadTask {
        if let background { return make { background.downloadTask(session: self, fallback: $0, request: self.prepared(request)) } }
        return make { URLSessionDownloadTask(session: self, identifier: $0, request: self.prepared(request), transport: self.local) }
    }

    /// A download that goes on from the bytes a cancelled or failed one left
    /// (``URLSessionDownloadTask/cancel(byProducingResumeData:)``, or the error's
    /// `downloadTaskResumeData`), in this run of the program or an earlier one. Data that cannot
    /// be used (not resume data, another session's, or its bytes gone) makes a task that fails
    /// with `URLError.cannotWriteToFile` when resumed, as on Apple's platforms.
    open func downloadTask(withResumeData resumeData: Data) -> URLSessionDownloadTask {
        if let background { return make { background.downloadTask(session: self, fallback: $0, resumeData: resumeData) } }
        let blob = LocalResumeData(blob: resumeData)
        return make {
            let task = URLSessionDownloadTask(
                session: self, identifier: $0, request: blob.map { self.prepared($0.request) }, transport: self.local
            )
            self.local.resumptions.withLock { $0[task.taskIdentifier] = blob.map { .valid($0) } ?? .invalid }
            return task
        }
    }

    open func downloadTask(with url: URL, completionHandler: @escaping @Sendable (URL?, URLResponse?, Error?) -> Void) -> URLSessionDownloadTask {
        downloadTask(with: URLRequest(url: url), completionHandler: completionHandler)
    }

    open func downloadTask(with request: URLRequest, completionHandler: @escaping @Sendable (URL?, URLResponse?, Error?) -> Void) -> URLSessionDownloadTask {
        let task = downloadTask(with: request)
        local.completions.withLock { $0[task.taskIdentifier] = .download(completionHandler) }
        return task
    }

    open func downloadTask(withResumeData resumeData: Data, completionHandler: @escaping @Sendable (URL?, URLResponse?, Error?) -> Void) -> URLSessionDownloadTask {
        let task = downloadTask(withResumeData: resumeData)
        local.completions.withLock { $0[task.taskIdentifier] = .download(completionHandler) }
        return task
    }

    // MARK: The session's tasks

    /// The tasks made and not yet ended, to `completionHandler` on the delegate queue.
    open func getAllTasks(completionHandler: @escaping @Sendable ([URLSessionTask]) -> Void) {
        let tasks = unfinishedTasks()
        delegateQueue.addOperation { completionHandler(tasks) }
    }

    /// The unfinished tasks by kind, to `completionHandler` on the delegate queue.
    open func getTasksWithCompletionHandler(
        _ completionHandler: @escaping @Sendable ([URLSessionDataTask], [URLSessionUploadTask], [URLSessionDownloadTask]) -> Void
    ) {
        let tasks = unfinishedTasks()
        let uploads = tasks.compactMap { $0 as? URLSessionUploadTask }
        let data = tasks.compactMap { $0 as? URLSessionDataTask }.filter { !($0 is URLSessionUploadTask) }
        let downloads = tasks.compactMap { $0 as? URLSessionDownloadTask }
        delegateQueue.addOperation { completionHandler(data, uploads, downloads) }
    }

    /// The tasks made and not yet ended.
    open var allTasks: [URLSessionTask] {
        get async { unfinishedTasks() }
    }

    func unfinishedTasks() -> [URLSessionTask] {
        background?.adoptUnfinishedTasks(into: self)
        return state.withLock { $0.tasks.values.sorted { $0.taskIdentifier < $1.taskIdentifier } }
    }

    // MARK: Invalidation

    /// Lets the running tasks end, then invalidates the session: its delegate hears
    /// `didBecomeInvalidWithError` (nil) and is let go. New tasks may not be made.
    open func finishTasksAndInvalidate() {
        guard self !== URLSession.shared else { return }
        let now = state.withLock { state -> Bool in
            state.invalidating = true
            return state.tasks.isEmpty && !state.invalidated
        }
        if now { invalidate() }
    }

    /// Cancels every task and invalidates the session. Background tasks are cancelled in the
    /// daemon too.
    open func invalidateAndCancel() {
        guard self !== URLSession.shared else { return }
        let tasks = state.withLock { state -> [URLSessionTask] in
            state.invalidating = true
            return Array(state.tasks.values)
        }
        for task in tasks { task.cancel() }
        if state.withLock({ $0.tasks.isEmpty && !$0.invalidated }) { invalidate() }
    }

    /// Empties the cache and the cookies of the session's storage, then calls
    /// `completionHandler` on the delegate queue.
    open func reset(completionHandler: @escaping @Sendable () -> Void) {
        configuration.urlCache?.removeAllCachedResponses()
        if let storage = configuration.httpCookieStorage { storage.removeCookies(since: .distantPast) }
        delegateQueue.addOperation(completionHandler)
    }

    /// Kept for source compatibility: responses are written as they arrive.
    open func flush(completionHandler: @escaping @Sendable () -> Void) {
        delegateQueue.addOperation(completionHandler)
    }

    private func invalidate() {
        background?.detach()
        let delegate = state.withLock { state -> URLSessionDelegate? in
            guard !state.invalidated else { return nil }
            state.invalidated = true
            return state.delegate
        }
        onDelegateQueue {
            delegate?.urlSession(self, didBecomeInvalidWithError: nil)
            self.state.withLock { $0.delegate = nil }
        }
    }

    // MARK: Plumbing

    /// Adds a task made with the next identifier (the daemon's, for a background task) to the
    /// session's unfinished tasks and tells the delegate.
    func make<Task: URLSessionTask>(_ body: (Int) -> Task) -> Task {
        let (identifier, delegate) = state.withLock { state -> (Int, URLSessionDelegate?) in
            precondition(!state.invalidating, "A task was made in a URLSession that was invalidated (\(configuration.identifier ?? "no identifier")).")
            defer { state.nextIdentifier += 1 }
            return (state.nextIdentifier, state.delegate)
        }
        let task = body(identifier)
        adopt(task)
        if let delegate = delegate as? URLSessionTaskDelegate {
            onDelegateQueue { delegate.urlSession(self, didCreateTask: task) }
        }
        return task
    }

    func adopt(_ task: URLSessionTask) {
        state.withLock { $0.tasks[task.taskIdentifier] = task }
    }

    /// A task ended and its last message was queued: forget it, and invalidate the session when
    /// it was the last one and invalidation was asked for.
    func forget(_ task: URLSessionTask) {
        let last = state.withLock { state -> Bool in
            // A background task made again from resume data has the same identifier: only this one goes.
            if state.tasks[task.taskIdentifier] === task { state.tasks[task.taskIdentifier] = nil }
            return state.invalidating && state.tasks.isEmpty && !state.invalidated
        }
        if last { invalidate() }
    }

    /// The request with the configuration's cache policy when it has the default, as Apple does.
    func prepared(_ request: URLRequest) -> URLRequest {
        var request = request
        if request.cachePolicy == .useProtocolCachePolicy { request.cachePolicy = configuration.requestCachePolicy }
        return request
    }

    /// The delegate that hears about `task`: its own, else the session's.
    func delegate(for task: URLSessionTask) -> URLSessionDelegate? {
        task.delegate ?? delegate
    }
}
