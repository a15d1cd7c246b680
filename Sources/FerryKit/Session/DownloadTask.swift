import Foundation
import Synchronization

/// One download of a ``BackgroundSession``: the analogue of `URLSessionDownloadTask`.
///
/// The daemon owns the download; a task object is a handle to it. Its properties show the
/// transfer as this object last heard of it: when it was made, after each of its own commands
/// (``suspend()``, ``resume()``, ``cancel()``) and after ``refresh()``. The daemon moves the
/// download on without telling the object, so follow ``BackgroundSession/events`` or call
/// ``refresh()`` for news.
///
/// Two task objects are equal when they name the same task of the same session.
public final class DownloadTask: Sendable, Identifiable, Hashable, CustomStringConvertible {
    /// The daemon's number for the task: unique among all sessions of the daemon and the same in
    /// every run of your program, so it is safe to store.
    public let taskIdentifier: Int64
    /// The URL as it was asked for (before redirects): the analogue of `originalRequest`.
    public let url: URL
    /// The label given to ``BackgroundSession/downloadTask(with:taskDescription:)``. Unlike iOS,
    /// it is set when the task is made and cannot change.
    public let taskDescription: String?

    let session: BackgroundSession
    private let snapshot: Mutex<Transfer>

    init(_ transfer: Transfer, session: BackgroundSession) {
        taskIdentifier = transfer.id
        // The daemon only accepts absolute http(s) URLs, so the string always parses.
        url = URL(string: transfer.url) ?? URL(string: "about:blank")!
        taskDescription = transfer.taskDescription
        self.session = session
        snapshot = Mutex(transfer)
    }

    /// Same as ``taskIdentifier``.
    public var id: Int64 { taskIdentifier }

    /// Everything the daemon reported about the task, as last heard: the file's `path` and
    /// `sha256` once completed, speed, attempts, dates.
    public var transfer: Transfer { snapshot.withLock { $0 } }

    /// Where the task is in its life, as last heard (``TransferState``: `queued`, `running`,
    /// `paused` (iOS: suspended), `waiting`, `completed`, `failed`, `cancelled`).
    public var state: TransferState { transfer.state }

    /// Bytes of the file received so far, as last heard.
    public var countOfBytesReceived: Int64 { transfer.bytesReceived }

    /// The file's size, once the server has said it (iOS uses
    /// `NSURLSessionTransferSizeUnknown`; here it is nil).
    public var countOfBytesExpectedToReceive: Int64? { transfer.totalBytes }

    /// The fraction received, in 0...1, when the size is known.
    public var fractionCompleted: Double? { transfer.fractionCompleted }

    /// Why the task failed or is waiting, as last heard.
    public var error: FerryError? { transfer.error.map(FerryError.init) }

    // MARK: Commands

    /// Reads the task's current state from the daemon.
    /// - Throws: ``FerryError`` `not_found` when the task was removed.
    public func refresh() async throws {
        update(try await session.withDaemon { try await $0.transfer(taskIdentifier) })
    }

    /// Continues a suspended task, tries a failed one again, or makes a waiting one try now.
    /// Resuming a queued or running task changes nothing. (A new task needs no `resume()`: it
    /// starts by itself.)
    /// - Throws: ``FerryError`` `invalid_state` for a completed or cancelled task; to continue a
    ///   cancelled one, use the resume data from ``cancelByProducingResumeData()``.
    public func resume() async throws {
        update(try await session.withDaemon { try await $0.resume(taskIdentifier) })
    }

    /// Suspends the task: it stops downloading and keeps its bytes on disk until ``resume()``.
    /// - Throws: ``FerryError`` `invalid_state` for a completed, failed or cancelled task.
    public func suspend() async throws {
        update(try await session.withDaemon { try await $0.pause(taskIdentifier) })
    }

    /// Stops the task for good and deletes the bytes received so far.
    /// - Throws: ``FerryError`` `invalid_state` for a completed task.
    public func cancel() async throws {
        update(try await session.withDaemon { try await $0.cancel(taskIdentifier) })
    }

    /// Stops the task, keeping its bytes on disk, and returns resume data for
    /// ``BackgroundSession/downloadTask(withResumeData:)``: an opaque, versioned blob that
    /// another run of your program may store and hand back, even after a daemon restart.
    ///
    /// - Returns: nil when the task cannot be continued: it is completed, was already cancelled
    ///   without resume data, or was removed.
    /// - Throws: ``FerryError`` `daemon_unreachable` when the daemon cannot be reached.
    public func cancelByProducingResumeData() async throws -> Data? {
        do {
            let (transfer, data) = try await session.withDaemon { client in
                (try await client.cancel(taskIdentifier, keepResumeData: true), try await client.resumeData(taskIdentifier))
            }
            update(transfer)
            return data
        } catch let error as FerryError where [.invalidState, .resumeDataStale, .notFound].contains(error.code) {
            try? await refresh()
            return nil
        }
    }

    private func update(_ transfer: Transfer) {
        snapshot.withLock { $0 = transfer }
    }

    // MARK: Identity

    /// True when both name the same task of the same session.
    public static func == (lhs: DownloadTask, rhs: DownloadTask) -> Bool {
        lhs.taskIdentifier == rhs.taskIdentifier && lhs.session.identifier == rhs.session.identifier
    }

    /// Hashes the task and session identifiers.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(taskIdentifier)
        hasher.combine(session.identifier)
    }

    /// `DownloadTask 12 running 42% https://example.com/a.mp3`.
    public var description: String {
        let current = transfer
        let percent = current.fractionCompleted.map { " \(Int($0 * 100))%" } ?? ""
        return "DownloadTask \(taskIdentifier) \(current.state.rawValue)\(percent) \(current.url)"
    }
}
