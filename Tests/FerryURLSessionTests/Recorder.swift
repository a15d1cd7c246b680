import FerryURLSession
import FerryTestSupport
import Synchronization

/// A delegate that writes down every message it gets, in order, with whether it came on the
/// session's delegate queue, and lets a test wait for a task's end.
final class Recorder: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, @unchecked Sendable {
    struct Call: Sendable, CustomStringConvertible {
        var name: String
        var task: Int
        var onDelegateQueue: Bool
        var numbers: [Int64] = []
        var error: URLError?
        var description: String { "\(name)(\(task))\(numbers.isEmpty ? "" : "\(numbers)")" }
    }

    let calls = Mutex<[Call]>([])
    private let ends = Mutex<[Int: CheckedContinuation<Void, Never>]>([:])
    private let ended = Mutex<Set<Int>>([])
    weak var session: URLSession?
    /// What didFinishDownloadingTo found at the location while it ran.
    let files = Mutex<[Int: Data]>([:])
    var redirect: (@Sendable (URLRequest) -> URLRequest?)?
    var challenge: (@Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?))?
    var location: URL?

    private func record(_ name: String, _ task: URLSessionTask?, _ numbers: [Int64] = [], error: Error? = nil) {
        let queued = OperationQueue.current != nil && OperationQueue.current === session?.delegateQueue
        calls.withLock { $0.append(Call(name: name, task: task?.taskIdentifier ?? 0, onDelegateQueue: queued, numbers: numbers, error: error as? URLError)) }
    }

    func names(_ task: URLSessionTask) -> [String] {
        calls.withLock { $0.filter { $0.task == task.taskIdentifier }.map(\.name) }
    }

    func calls(_ task: URLSessionTask) -> [Call] {
        calls.withLock { $0.filter { $0.task == task.taskIdentifier } }
    }

    /// Waits for `task`'s didCompleteWithError.
    func end(of task: URLSessionTask) async {
        await withCheckedContinuation { continuation in
            let done = ended.withLock { $0.contains(task.taskIdentifier) }
            if done { continuation.resume() } else { ends.withLock { $0[task.taskIdentifier] = continuation } }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        record("didComplete", task, error: error)
        ended.withLock { _ = $0.insert(task.taskIdentifier) }
        ends.withLock { $0.removeValue(forKey: task.taskIdentifier) }?.resume()
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        // The file first: a test that sees the call recorded reads it next.
        let data = try? Data(contentsOf: location)
        files.withLock { $0[downloadTask.taskIdentifier] = data }
        self.location = location
        record("didFinishDownloading", downloadTask)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        record("didWriteData", downloadTask, [bytesWritten, totalBytesWritten, totalBytesExpectedToWrite])
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64) {
        record("didResumeAtOffset", downloadTask, [fileOffset, expectedTotalBytes])
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse, completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        record("didReceiveResponse", dataTask, [Int64((response as? HTTPURLResponse)?.statusCode ?? 0)])
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        record("didReceiveData", dataTask, [Int64(data.count)])
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        record("willRedirect", task, [Int64(response.statusCode)])
        completionHandler(redirect.map { $0(request) } ?? request)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge, completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        record("didReceiveChallenge", task, [Int64(challenge.previousFailureCount)])
        let (disposition, credential) = self.challenge?(challenge) ?? (.performDefaultHandling, nil)
        completionHandler(disposition, credential)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        record("didSendBodyData", task, [bytesSent, totalBytesSent, totalBytesExpectedToSend])
    }

    func urlSession(_ session: URLSession, didCreateTask task: URLSessionTask) {
        record("didCreateTask", task)
    }

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: Error?) {
        record("didBecomeInvalid", nil)
    }
}

extension Recorder {
    func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        let queued = OperationQueue.current === session.delegateQueue
        calls.withLock { $0.append(Call(name: "waitingForConnectivity", task: task.taskIdentifier, onDelegateQueue: queued)) }
    }
}

extension Recorder {
    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        let queued = OperationQueue.current === session.delegateQueue
        calls.withLock { $0.append(Call(name: "didFinishEvents", task: 0, onDelegateQueue: queued)) }
    }

    func waitFor(_ name: String, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !calls.withLock({ $0.contains { $0.name == name } }) {
            guard ContinuousClock.now < deadline else { throw TestFailure("no \(name) within \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// Runs `body` on a Dispatch thread: a background session's calls wait there for the daemon, not
/// on one of the cooperative threads the in-process test daemon and the other tests need.
func offPool<T>(_ body: @escaping () -> T) async -> T {
    let box = UncheckedResult<T>()
    box.body = body
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async {
            box.value = box.body?()
            continuation.resume()
        }
    }
    return box.value!
}

final class UncheckedResult<T>: @unchecked Sendable {
    var body: (() -> T)?
    var value: T?
}

/// A cancel-with-resume-data call made from a Dispatch thread (a background task's waits for the
/// daemon), and the data it hands over.
func cancelledForResumeData(_ cancel: @escaping @Sendable (@escaping @Sendable (Data?) -> Void) -> Void) async -> Data? {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { cancel { continuation.resume(returning: $0) } }
    }
}
