import Foundation

/// Something that happened to a transfer. Journaled events carry the journal's global sequence
/// number (`seq`), which the event stream sends as the Server-Sent Events `id`; live progress
/// between checkpoints has no `seq` and is never replayed.
public struct TransferEvent: Codable, Sendable, Hashable {
    /// What happened: the `kind` field of the JSON, one case per event type.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// The transfer was journaled: the first event of every transfer.
        case created
        /// The server answered and the file began from its first byte.
        case started
        /// The file grew to `bytesReceived`: journaled at each checkpoint (the bytes are on disk),
        /// or live a few times a second without a `seq`.
        case progress
        /// Paused by request; the bytes on disk are kept.
        case paused
        /// The transfer continues from `offset` bytes already on disk (after a pause, a daemon
        /// restart, a retry or resume data).
        case resumed
        /// The server could not continue where the transfer stopped, so it starts over from zero;
        /// `reason` says why.
        case restarted
        /// An attempt failed in a way that waiting can mend; `reason` says why in a few words
        /// ("no network", "cannot resolve example.com"), `error` in full, and the next attempt
        /// starts at `retryAt` (or sooner, when the network comes back).
        case waiting
        /// A mirror (or, while mirrors remain, the URL itself) stopped being used; `reason` says
        /// which and why. The download goes on from the others.
        case mirrorDropped
        /// Finished; for a download, the file is in the library at `path`, with its `sha256`.
        case completed
        /// Gave up: a permanent `error`, or too many transient ones.
        case failed
        /// Stopped for good.
        case cancelled
        /// Removed from the daemon; its id is gone.
        case removed
    }

    /// The event's number in the journal (increasing, shared by all sessions), sent as the SSE
    /// `id`; nil for live progress, which is never replayed.
    public var seq: Int64?
    /// What happened.
    public var kind: Kind
    /// The ``Transfer/id`` of the transfer it happened to.
    public var transferId: Int64
    /// The transfer's session.
    public var session: String
    /// When it happened.
    public var date: Date
    /// Bytes received (progress, paused, checkpoints, completed).
    public var bytesReceived: Int64?
    /// The file's size, once the server has said it.
    public var totalBytes: Int64?
    /// `resumed`: the byte offset the server agreed to continue from.
    public var offset: Int64?
    /// `restarted`, `waiting`, `cancelled`: why, in words.
    public var reason: String?
    /// `waiting`: the number of the attempt that failed.
    public var attempt: Int?
    /// `waiting`: when the next attempt starts.
    public var retryAt: Date?
    /// `completed`: the absolute path of the file in the library.
    public var path: String?
    /// `completed`: the file's lower-case hex SHA-256.
    public var sha256: String?
    /// `failed` and `waiting`: what went wrong.
    public var error: TransferErrorInfo?
    /// Live `progress`: the speed in bytes per second.
    public var bytesPerSecond: Double?
    /// Live `progress`: the estimated seconds left, when the size is known.
    public var etaSeconds: Double?
    /// Live `progress` of a segmented download: its connections now, and its ranges.
    public var connections: Int?
    public var ranges: [TransferRange]?

    /// Makes an event; the daemon makes them and clients decode them.
    /// Each parameter sets the property of the same name.
    public init(
        seq: Int64? = nil, kind: Kind, transferId: Int64, session: String, date: Date = Date(),
        bytesReceived: Int64? = nil, totalBytes: Int64? = nil, offset: Int64? = nil,
        reason: String? = nil, attempt: Int? = nil, retryAt: Date? = nil, path: String? = nil,
        sha256: String? = nil, error: TransferErrorInfo? = nil, bytesPerSecond: Double? = nil,
        etaSeconds: Double? = nil, connections: Int? = nil, ranges: [TransferRange]? = nil
    ) {
        self.seq = seq
        self.kind = kind
        self.transferId = transferId
        self.session = session
        self.date = date
        self.bytesReceived = bytesReceived
        self.totalBytes = totalBytes
        self.offset = offset
        self.reason = reason
        self.attempt = attempt
        self.retryAt = retryAt
        self.path = path
        self.sha256 = sha256
        self.error = error
        self.bytesPerSecond = bytesPerSecond
        self.etaSeconds = etaSeconds
        self.connections = connections
        self.ranges = ranges
    }
}
