import Foundation

/// Something that happened to a transfer. Journaled events carry the journal's global sequence
/// number (`seq`), which the event stream sends as the Server-Sent Events `id`; live progress
/// between checkpoints has no `seq` and is never replayed.
public struct TransferEvent: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case created, started, progress, paused, resumed, restarted, retrying
        case completed, failed, cancelled, removed
    }

    public var seq: Int64?
    public var kind: Kind
    public var transferId: Int64
    public var session: String
    public var date: Date
    /// Bytes received (progress, paused, checkpoints, completed).
    public var bytesReceived: Int64?
    public var totalBytes: Int64?
    /// `resumed`: the byte offset the server agreed to continue from.
    public var offset: Int64?
    /// `restarted`, `retrying`, `cancelled`: why, in words.
    public var reason: String?
    /// `retrying`: the attempt that failed, and when the next one starts.
    public var attempt: Int?
    public var retryAt: Date?
    /// `completed`: where the file is and its SHA-256.
    public var path: String?
    public var sha256: String?
    /// `failed` and `retrying`: what went wrong.
    public var error: TransferErrorInfo?
    /// Live `progress`: speed and estimated time left.
    public var bytesPerSecond: Double?
    public var etaSeconds: Double?

    public init(
        seq: Int64? = nil, kind: Kind, transferId: Int64, session: String, date: Date = Date(),
        bytesReceived: Int64? = nil, totalBytes: Int64? = nil, offset: Int64? = nil,
        reason: String? = nil, attempt: Int? = nil, retryAt: Date? = nil, path: String? = nil,
        sha256: String? = nil, error: TransferErrorInfo? = nil, bytesPerSecond: Double? = nil,
        etaSeconds: Double? = nil
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
    }
}
