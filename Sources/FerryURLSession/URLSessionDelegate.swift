// Apple's delegate protocols, with their names and signatures. Apple's methods are optional
// (Objective-C); here each has a default in an extension that does what URLSession does when a
// delegate lacks the method, so a delegate implements only what it needs, as on Apple's platforms.

/// Session-wide messages: invalidation, server trust, the end of a background session's events.
public protocol URLSessionDelegate: NSObjectProtocol {
    /// The session is invalidated (``URLSession/finishTasksAndInvalidate()`` once its tasks
    /// ended, or ``URLSession/invalidateAndCancel()``); the session lets go of its delegate after.
    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: Error?)
    /// A session-wide challenge: the server's certificate (`NSURLAuthenticationMethodServerTrust`).
    /// Default: `.performDefaultHandling` (the system's trust roots decide).
    func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    )
    /// Every message about background tasks that ended while the program was not running has
    /// been delivered (after the session with the same identifier was made again).
    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession)
}

/// Messages about one task of any kind.
public protocol URLSessionTaskDelegate: URLSessionDelegate {
    /// A task was made in the session.
    func urlSession(_ session: URLSession, didCreateTask task: URLSessionTask)
    /// A task with an ``URLSessionTask/earliestBeginDate`` is about to start: go on with its
    /// request (or a new one), or cancel it. Default: `.continueLoading`.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willBeginDelayedRequest request: URLRequest,
        completionHandler: @escaping (URLSession.DelayedRequestDisposition, URLRequest?) -> Void
    )
    /// The task waits for a network (``URLSessionConfiguration/waitsForConnectivity``); called
    /// once per task.
    func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask)
    /// The server redirected: answer the request to follow, or nil to take the redirect response
    /// as the task's answer. Default: follow.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    )
    /// A challenge for this task: HTTP Basic or Digest authentication, or the server's
    /// certificate. Default: the session-wide method.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    )
    /// A stream-bodied upload must send its body again (after a redirect or an authentication).
    func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping (InputStream?) -> Void)
    /// Bytes of an upload's body sent.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    )
    /// Declared so delegates written for Apple's platforms compile; never called:
    /// FoundationNetworking offers no way to make a `URLSessionTaskMetrics`.
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics)
    /// The task ended: `error` nil on success (an HTTP error status is a success), else a
    /// `URLError`; a cancelled download's has its resume data under
    /// ``NSURLSessionDownloadTaskResumeData`` when it can go on.
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?)
}

/// Messages about data tasks (and uploads, which are data tasks).
public protocol URLSessionDataDelegate: URLSessionTaskDelegate {
    /// The response's head: allow the body, or cancel. Default: `.allow`.
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    )
    /// Declared so delegates written for Apple's platforms compile; never called: Ferry does not
    /// turn data tasks into download tasks (`.becomeDownload` is taken as `.allow`).
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask)
    /// More of the body, in order.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data)
    /// The response is about to be cached: cache it, another, or nothing. Default: as proposed.
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping (CachedURLResponse?) -> Void
    )
}

/// Messages about download tasks.
public protocol URLSessionDownloadDelegate: URLSessionTaskDelegate {
    /// The download is complete in the temporary file at `location`: move or open it before
    /// returning, for it is removed when this method returns.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL)
    /// Bytes written to the temporary file since the last call (calls are coalesced while the
    /// delegate queue is busy), in all, and expected (`NSURLSessionTransferSizeUnknown` when the
    /// server did not say).
    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    )
    /// A download made from resume data goes on at `fileOffset` (0: the server sent the whole
    /// file again, so it starts over).
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64)
}

extension URLSessionDelegate {
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: Error?) {}
    public func urlSession(
        _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        completionHandler(.performDefaultHandling, nil)
    }
    public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {}
}

extension URLSessionTaskDelegate {
    public func urlSession(_ session: URLSession, didCreateTask task: URLSessionTask) {}
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willBeginDelayedRequest request: URLRequest,
        completionHandler: @escaping (URLSession.DelayedRequestDisposition, URLRequest?) -> Void
    ) {
        completionHandler(.continueLoading, nil)
    }
    public func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {}
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(request)
    }
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        urlSession(session, didReceive: challenge, completionHandler: completionHandler)
    }
    public func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping (InputStream?) -> Void) {
        completionHandler(nil)
    }
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {}
    public func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {}
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {}
}

extension URLSessionDataDelegate {
    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        completionHandler(.allow)
    }
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask) {}
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {}
    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping (CachedURLResponse?) -> Void
    ) {
        completionHandler(proposedResponse)
    }
}

extension URLSessionDownloadDelegate {
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {}
    public func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64) {}
}

/// The size a download reports expecting when the server did not say, as Apple defines it.
public let NSURLSessionTransferSizeUnknown: Int64 = -1
