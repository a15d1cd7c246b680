import Foundation

/// One transfer as the daemon reports it: the stable JSON shape of the API, `ferry ls --json`
/// and FerryKit.
public struct Transfer: Codable, Sendable, Hashable, Identifiable {
    /// The daemon-wide identifier (`ferry pause 12`).
    public var id: Int64
    /// The URL as it was asked for (before redirects).
    public var url: String
    /// The session identifier the transfer belongs to (`cli`, `web`, an app's own).
    public var session: String
    public var state: TransferState
    /// Bytes of the file received so far (durable or not).
    public var bytesReceived: Int64
    /// The file's size, once the server has said it.
    public var totalBytes: Int64?
    /// Absolute path of the finished file in the library, once completed.
    public var path: String?
    /// Lower-case hex SHA-256 of the finished file, once completed.
    public var sha256: String?
    /// Why the transfer failed or is retrying.
    public var error: TransferErrorInfo?
    /// The library folder the file goes to, relative to the library root (`Downloads`, `Music`).
    public var folder: String
    /// A caller-chosen label, like `URLSessionTask.taskDescription`.
    public var taskDescription: String?
    /// Current speed in bytes per second while running.
    public var bytesPerSecond: Double?
    /// Estimated seconds until completion while running with a known total.
    public var etaSeconds: Double?
    /// Attempts made so far (1 after the first connection).
    public var attempts: Int
    /// When a retrying transfer will try again.
    public var retryAt: Date?
    public var createdAt: Date
    public var updatedAt: Date
    public var completedAt: Date?

    public init(
        id: Int64, url: String, session: String, state: TransferState, bytesReceived: Int64 = 0,
        totalBytes: Int64? = nil, path: String? = nil, sha256: String? = nil,
        error: TransferErrorInfo? = nil, folder: String = "Downloads", taskDescription: String? = nil,
        bytesPerSecond: Double? = nil, etaSeconds: Double? = nil, attempts: Int = 0,
        retryAt: Date? = nil, createdAt: Date, updatedAt: Date, completedAt: Date? = nil
    ) {
        self.id = id
        self.url = url
        self.session = session
        self.state = state
        self.bytesReceived = bytesReceived
        self.totalBytes = totalBytes
        self.path = path
        self.sha256 = sha256
        self.error = error
        self.folder = folder
        self.taskDescription = taskDescription
        self.bytesPerSecond = bytesPerSecond
        self.etaSeconds = etaSeconds
        self.attempts = attempts
        self.retryAt = retryAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.completedAt = completedAt
    }

    /// Fraction done in 0...1, when the total is known.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return state == .completed ? 1 : nil }
        return min(1, Double(bytesReceived) / Double(totalBytes))
    }

    /// `id`, `url`, `session`, `state`, `bytesReceived`, `totalBytes`, `path`, `sha256` and `error`
    /// are always present in JSON (as `null` when unknown), so scripts can rely on the keys.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(url, forKey: .url)
        try c.encode(session, forKey: .session)
        try c.encode(state, forKey: .state)
        try c.encode(bytesReceived, forKey: .bytesReceived)
        try c.encode(totalBytes, forKey: .totalBytes)
        try c.encode(path, forKey: .path)
        try c.encode(sha256, forKey: .sha256)
        try c.encode(error, forKey: .error)
        try c.encode(folder, forKey: .folder)
        try c.encodeIfPresent(taskDescription, forKey: .taskDescription)
        try c.encodeIfPresent(bytesPerSecond, forKey: .bytesPerSecond)
        try c.encodeIfPresent(etaSeconds, forKey: .etaSeconds)
        try c.encode(attempts, forKey: .attempts)
        try c.encodeIfPresent(retryAt, forKey: .retryAt)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encodeIfPresent(completedAt, forKey: .completedAt)
    }
}

/// A machine-readable code and a sentence for people, as in every Ferry error.
public struct TransferErrorInfo: Codable, Sendable, Hashable {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}
