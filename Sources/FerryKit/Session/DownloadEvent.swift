import Foundation

/// Something that happened to one of a session's download tasks: what iOS tells a
/// `URLSessionDownloadDelegate`, as a value.
///
/// The daemon journals every event except live progress. A journaled event carries ``seq``, its
/// position in the daemon's journal: once you have handled it, pass that number to
/// ``BackgroundSession/acknowledge(through:)`` so the session does not replay it to the next
/// run of your program.
///
/// ```swift
/// for try await event in session.events {
///     switch event.kind {
///     case .didFinish(let location, let sha256): print("\(event.taskIdentifier): \(location.path) \(sha256)")
///     case .didFail(let error): print("\(event.taskIdentifier) failed: \(error)")
///     default: break
///     }
///     if let seq = event.seq { try await session.acknowledge(through: seq) }
/// }
/// ```
public struct DownloadEvent: Sendable, Hashable {
    /// What happened.
    public enum Kind: Sendable, Hashable {
        /// The task was created: by this program, an earlier run of it, or another client of
        /// the same session (`ferry get --session`).
        case didCreate
        /// The server answered and the download began from the first byte.
        case didStart
        /// The file has grown. Live progress comes a few times a second while the task runs and
        /// has no ``DownloadEvent/seq``; the journaled kind comes at each checkpoint, when the
        /// bytes so far are safely on disk. Its count is what is on disk, so it can be behind
        /// live progress delivered just before it (bytes that arrived while the checkpoint's
        /// fsync ran): keep the larger of the two if you show a progress bar.
        /// - `totalBytesWritten`: bytes of the file received so far (journaled: on disk).
        /// - `totalBytesExpectedToWrite`: the file's size, nil until the server has said it.
        case didWriteData(totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64?)
        /// The download continues from `offset` bytes already on disk: after a suspend, a daemon
        /// restart, a retry, or resume data. For resume data it comes twice: when the daemon
        /// takes the task back, and when the server agrees to continue.
        case didResume(offset: Int64)
        /// The server could not continue where the download stopped (the file changed, or the
        /// server ignores ranges), so it starts again from zero; `reason` says why.
        case didRestart(reason: String)
        /// A mirror of the download stopped being used (it failed, or its copy differs); `reason`
        /// names it and says why. The download goes on from the others.
        case didDropMirror(reason: String)
        /// An attempt failed in a way that waiting can mend (no network, a name that does not
        /// resolve, a timeout, a busy server): the task waits, like iOS's
        /// `urlSession(_:taskIsWaitingForConnectivity:)`, and the daemon tries again on its own at
        /// `until`, or as soon as the network comes back. `reason` says why in a few words ("no
        /// network"), `error` in full. It fails only after its resource timeout (7 days by default).
        case isWaiting(reason: String, until: Date, error: FerryError)
        /// The task was suspended; its bytes on disk are kept.
        case didPause
        /// The file is complete, verified and in the library at `location`, where it stays (unlike
        /// iOS, there is no temporary file to move away). `sha256` is its lower-case hex digest.
        /// For an upload task: the server accepted the file at `location` (the file sent), and
        /// the task's transfer holds the server's answer.
        case didFinish(location: URL, sha256: String)
        /// The task gave up: a permanent error (such as a 404) or too many transient ones.
        /// ``DownloadTask/resume()`` tries again.
        case didFail(FerryError)
        /// The task was cancelled.
        case didCancel
        /// The task was removed from the daemon (`ferry rm`); its identifier is gone.
        case didRemove
    }

    /// The ``DownloadTask/taskIdentifier`` of the task it happened to.
    public var taskIdentifier: Int64
    /// The event's number in the daemon's journal (increasing, shared by all sessions); nil for
    /// live progress, which is never replayed.
    public var seq: Int64?
    /// When it happened.
    public var date: Date
    /// What happened, with its details.
    public var kind: Kind

    /// Makes an event; FerryKit makes them from what the daemon sends.
    /// - Parameters:
    ///   - taskIdentifier: the task it happened to.
    ///   - seq: its journal number; nil for live progress.
    ///   - date: when it happened.
    ///   - kind: what happened.
    public init(taskIdentifier: Int64, seq: Int64?, date: Date, kind: Kind) {
        self.taskIdentifier = taskIdentifier
        self.seq = seq
        self.date = date
        self.kind = kind
    }

    /// Translates the daemon's wire event. Nil only for a `completed` event without its path or
    /// digest, which the daemon never sends.
    init?(_ event: TransferEvent) {
        let kind: Kind
        switch event.kind {
        case .created: kind = .didCreate
        case .started: kind = .didStart
        case .progress:
            kind = .didWriteData(totalBytesWritten: event.bytesReceived ?? 0, totalBytesExpectedToWrite: event.totalBytes)
        case .resumed: kind = .didResume(offset: event.offset ?? event.bytesReceived ?? 0)
        case .restarted: kind = .didRestart(reason: event.reason ?? "The server sent the whole file again.")
        case .mirrorDropped: kind = .didDropMirror(reason: event.reason ?? "A mirror was dropped.")
        case .waiting:
            let error = event.error.map(FerryError.init) ?? FerryError(.connectionFailed, event.reason ?? "The attempt failed.")
            kind = .isWaiting(reason: event.reason ?? error.message, until: event.retryAt ?? event.date, error: error)
        case .paused: kind = .didPause
        case .completed:
            guard let path = event.path, let sha256 = event.sha256 else { return nil }
            kind = .didFinish(location: URL(fileURLWithPath: path), sha256: sha256)
        case .failed: kind = .didFail(event.error.map(FerryError.init) ?? FerryError(.internalError, "The download failed."))
        case .cancelled: kind = .didCancel
        case .removed: kind = .didRemove
        }
        self.init(taskIdentifier: event.transferId, seq: event.seq, date: event.date, kind: kind)
    }
}
