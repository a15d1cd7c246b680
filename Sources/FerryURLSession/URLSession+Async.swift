/// Apple's async conveniences: each makes a task with a completion handler, resumes it, and
/// cancels it when the calling Swift task is cancelled.
extension URLSession {
    public func data(for request: URLRequest, delegate: URLSessionTaskDelegate? = nil) async throws -> (Data, URLResponse) {
        try await loading(delegate) { self.dataTask(with: request, completionHandler: $0) }
    }

    public func data(from url: URL, delegate: URLSessionTaskDelegate? = nil) async throws -> (Data, URLResponse) {
        try await data(for: URLRequest(url: url), delegate: delegate)
    }

    public func upload(for request: URLRequest, from bodyData: Data, delegate: URLSessionTaskDelegate? = nil) async throws -> (Data, URLResponse) {
        try await loading(delegate) { self.uploadTask(with: request, from: bodyData, completionHandler: $0) }
    }

    public func upload(for request: URLRequest, fromFile fileURL: URL, delegate: URLSessionTaskDelegate? = nil) async throws -> (Data, URLResponse) {
        try await loading(delegate) { self.uploadTask(with: request, fromFile: fileURL, completionHandler: $0) }
    }

    /// Downloads to a temporary file that is yours to move or delete (it is not removed).
    public func download(for request: URLRequest, delegate: URLSessionTaskDelegate? = nil) async throws -> (URL, URLResponse) {
        try await downloading(delegate) { self.downloadTask(with: request, completionHandler: $0) }
    }

    public func download(from url: URL, delegate: URLSessionTaskDelegate? = nil) async throws -> (URL, URLResponse) {
        try await download(for: URLRequest(url: url), delegate: delegate)
    }

    public func download(resumeFrom resumeData: Data, delegate: URLSessionTaskDelegate? = nil) async throws -> (URL, URLResponse) {
        try await downloading(delegate) { self.downloadTask(withResumeData: resumeData, completionHandler: $0) }
    }

    /// A data or upload task's answer (an upload task is a data task).
    private func loading(
        _ delegate: URLSessionTaskDelegate?, _ make: (@escaping @Sendable (Data?, URLResponse?, Error?) -> Void) -> URLSessionDataTask
    ) async throws -> (Data, URLResponse) {
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = make { data, response, error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: (data ?? Data(), response!)) }
                }
                task.delegate = delegate
                box.task = task
                task.resume()
            }
        } onCancel: {
            box.task?.cancel()
        }
    }

    private func downloading(
        _ delegate: URLSessionTaskDelegate?, _ make: (@escaping @Sendable (URL?, URLResponse?, Error?) -> Void) -> URLSessionDownloadTask
    ) async throws -> (URL, URLResponse) {
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = make { location, response, error in
                    guard let location, let response, error == nil else {
                        continuation.resume(throwing: error ?? URLErrorMaker.make(.unknown, nil, "The download ended without a file."))
                        return
                    }
                    // The session removes `location` when this handler returns: the caller's copy is another name.
                    let kept = location.deletingLastPathComponent().appendingPathComponent("FerryURLSession_\(UUID().uuidString).download")
                    do {
                        try FileManager.default.moveItem(at: location, to: kept)
                        continuation.resume(returning: (kept, response))
                    } catch {
                        continuation.resume(throwing: URLErrorMaker.from(error, url: response.url))
                    }
                }
                task.delegate = delegate
                box.task = task
                task.resume()
            }
        } onCancel: {
            box.task?.cancel()
        }
    }
}

/// The task an async call made, for its cancellation handler.
final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var _task: URLSessionTask?
    var task: URLSessionTask? {
        get { lock.withLock { _task } }
        set { lock.withLock { _task = newValue } }
    }
}
