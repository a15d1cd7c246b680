/// Where a transfer is in its life.
///
/// ```
/// queued ──▶ running ──▶ completed
///   ▲  │       │ ▲ │
///   │  │       │ │ └──▶ waiting ──▶ (running again)
///   │  ▼       ▼ │
///   └─ paused ◀┘ └──── failed / cancelled
/// ```
public enum TransferState: String, Codable, Sendable, CaseIterable {
    /// Waiting for a free slot, in order of creation.
    case queued
    /// Bytes are flowing (or a connection is being made).
    case running
    /// Stopped by request; the part file and resume data are kept.
    case paused
    /// An attempt failed in a way that waiting can mend (no network, a name that does not resolve,
    /// a busy server): the transfer tries again at ``Transfer/retryAt``, or as soon as the
    /// network comes back, until its resource timeout. ``Transfer/waitReason`` says why.
    case waiting
    /// The file is in the library and its SHA-256 is known.
    case completed
    /// Gave up: a permanent error, or retries exhausted. `resume` tries again.
    case failed
    /// Stopped for good; the part file is deleted (unless resume data was asked for).
    case cancelled

    /// Queued, running or waiting: the daemon will move it forward on its own.
    public var isActive: Bool {
        switch self {
        case .queued, .running, .waiting: true
        case .paused, .completed, .failed, .cancelled: false
        }
    }

    /// Completed, failed or cancelled: nothing more happens without a request.
    public var isFinal: Bool {
        switch self {
        case .completed, .failed, .cancelled: true
        case .queued, .running, .paused, .waiting: false
        }
    }
}
