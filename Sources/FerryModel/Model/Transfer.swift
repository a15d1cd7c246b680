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
    /// Where the transfer is in its life.
    public var state: TransferState
    /// Bytes of the file received so far (durable or not).
    public var bytesReceived: Int64
    /// The file's size, once the server has said it.
    public var totalBytes: Int64?
    /// Absolute path of the finished file in the library, once completed.
    public var path: String?
    /// Lower-case hex SHA-256 of the finished file, once completed.
    public var sha256: String?
    /// Why the transfer failed or is waiting.
    public var error: TransferErrorInfo?
    /// Why a waiting transfer waits, in a few words: "no network", "cannot resolve example.com",
    /// "server busy until 14:05".
    public var waitReason: String?
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
    /// When a waiting transfer tries again (sooner if the network comes back).
    public var retryAt: Date?
    /// When the transfer was asked for.
    public var createdAt: Date
    /// When anything about it last changed.
    public var updatedAt: Date
    /// When it completed, if it has.
    public var completedAt: Date?
    /// A download (the default) or an upload.
    public var kind: TransferKind
    /// Uploads: the request method (`PUT`, `POST`).
    public var method: String?
    /// Uploads: the file being sent.
    public var sourcePath: String?
    /// Uploads: the protocol in use.
    public var uploadProtocol: UploadProtocol?
    /// Uploads: what the server answered, once it has.
    public var response: UploadResponse?
    /// Not started before this date.
    public var startAfter: Date?
    /// This transfer's own options (over its session's), sensitive header values redacted.
    public var options: TransferOptions?
    /// A segmented download while it runs: the connections fetching it now.
    public var connections: Int?
    /// A segmented download's ranges in file order, with the bytes of each in the file (live
    /// while it runs, else the durable ones).
    public var ranges: [TransferRange]?
    /// Other servers with the same file, fetched from beside ``url`` (`ferry get --mirror`); a
    /// dropped one says why.
    public var mirrors: [TransferMirror]?
    /// The folder the user chose for the file (absolute), when not a library folder.
    public var directory: String?
    /// The digest the file must have, as given (`sha-256=…`).
    public var checksum: Checksum?
    /// What the finished file was checked against beyond its length: `checksum sha-256` (the
    /// one given), `Repr-Digest sha-256` (the server's).
    public var verifiedBy: [String]?
    /// Which queued transfers start first (absent: normal).
    public var priority: TransferPriority?
    /// A completed download whose file is no longer at ``path`` (deleted or moved behind
    /// Ferry's back): "downloaded" means the file is there. Checked whenever it is listed.
    public var fileMissing: Bool?
    /// In a cluster: the member (daemon) that holds the transfer, running it or about to.
    public var member: String?
    /// The account that asked for it; nil for this machine's own clients (the CLI, the web app
    /// on the server, the library's downloads). A member may pause or cancel only their own.
    public var requestedBy: String?
    /// The HTTP version its last answer came over: `HTTP/2` (a stream of a shared connection)
    /// or `HTTP/1.1`.
    public var httpVersion: String?

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(
        id: Int64, url: String, session: String, state: TransferState, bytesReceived: Int64 = 0,
        totalBytes: Int64? = nil, path: String? = nil, sha256: String? = nil,
        error: TransferErrorInfo? = nil, waitReason: String? = nil, folder: String = "Downloads", taskDescription: String? = nil,
        bytesPerSecond: Double? = nil, etaSeconds: Double? = nil, attempts: Int = 0,
        retryAt: Date? = nil, createdAt: Date, updatedAt: Date, completedAt: Date? = nil, kind: TransferKind = .download,
        method: String? = nil, sourcePath: String? = nil, uploadProtocol: UploadProtocol? = nil,
        response: UploadResponse? = nil, startAfter: Date? = nil, options: TransferOptions? = nil,
        connections: Int? = nil, ranges: [TransferRange]? = nil, mirrors: [TransferMirror]? = nil,
        directory: String? = nil, checksum: Checksum? = nil, verifiedBy: [String]? = nil, priority: TransferPriority? = nil,
        fileMissing: Bool? = nil, member: String? = nil, requestedBy: String? = nil, httpVersion: String? = nil
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
        self.waitReason = waitReason
        self.folder = folder
        self.taskDescription = taskDescription
        self.bytesPerSecond = bytesPerSecond
        self.etaSeconds = etaSeconds
        self.attempts = attempts
        self.retryAt = retryAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.completedAt = completedAt
        self.kind = kind
        self.method = method
        self.sourcePath = sourcePath
        self.uploadProtocol = uploadProtocol
        self.response = response
        self.startAfter = startAfter
        self.options = options
        self.connections = connections
        self.ranges = ranges
        self.mirrors = mirrors
        self.directory = directory
        self.checksum = checksum
        self.verifiedBy = verifiedBy
        self.priority = priority
        self.fileMissing = fileMissing
        self.member = member
        self.requestedBy = requestedBy
        self.httpVersion = httpVersion
    }

    /// Fraction done in 0...1, when the total is known (1 once completed, even without one).
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return state == .completed ? 1 : nil }
        return min(1, Double(bytesReceived) / Double(totalBytes))
    }

    enum CodingKeys: String, CodingKey {
        case id, url, session, state, bytesReceived, totalBytes, path, sha256, error, waitReason, folder, taskDescription
        case bytesPerSecond, etaSeconds, attempts, retryAt, createdAt, updatedAt, completedAt
        case kind, method, sourcePath, uploadProtocol, response, startAfter, options, connections, ranges, mirrors
        case directory, checksum, verifiedBy, priority, fileMissing, member, requestedBy, httpVersion
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
        try c.encodeIfPresent(waitReason, forKey: .waitReason)
        try c.encode(folder, forKey: .folder)
        try c.encodeIfPresent(taskDescription, forKey: .taskDescription)
        try c.encodeIfPresent(bytesPerSecond, forKey: .bytesPerSecond)
        try c.encodeIfPresent(etaSeconds, forKey: .etaSeconds)
        try c.encode(attempts, forKey: .attempts)
        try c.encodeIfPresent(retryAt, forKey: .retryAt)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encodeIfPresent(completedAt, forKey: .completedAt)
        try c.encode(kind, forKey: .kind)
        try c.encodeIfPresent(method, forKey: .method)
        try c.encodeIfPresent(sourcePath, forKey: .sourcePath)
        try c.encodeIfPresent(uploadProtocol, forKey: .uploadProtocol)
        try c.encodeIfPresent(response, forKey: .response)
        try c.encodeIfPresent(startAfter, forKey: .startAfter)
        try c.encodeIfPresent(options, forKey: .options)
        try c.encodeIfPresent(connections, forKey: .connections)
        try c.encodeIfPresent(ranges, forKey: .ranges)
        try c.encodeIfPresent(mirrors, forKey: .mirrors)
        try c.encodeIfPresent(directory, forKey: .directory)
        try c.encodeIfPresent(checksum, forKey: .checksum)
        try c.encodeIfPresent(verifiedBy, forKey: .verifiedBy)
        try c.encodeIfPresent(priority, forKey: .priority)
        try c.encodeIfPresent(fileMissing, forKey: .fileMissing)
        try c.encodeIfPresent(member, forKey: .member)
        try c.encodeIfPresent(requestedBy, forKey: .requestedBy)
        try c.encodeIfPresent(httpVersion, forKey: .httpVersion)
    }

    /// Reads the JSON shape, taking the defaults for keys that an older daemon leaves out
    /// (`folder`, `attempts`, `kind`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int64.self, forKey: .id)
        url = try c.decode(String.self, forKey: .url)
        session = try c.decode(String.self, forKey: .session)
        state = try c.decode(TransferState.self, forKey: .state)
        bytesReceived = try c.decode(Int64.self, forKey: .bytesReceived)
        totalBytes = try c.decodeIfPresent(Int64.self, forKey: .totalBytes)
        path = try c.decodeIfPresent(String.self, forKey: .path)
        sha256 = try c.decodeIfPresent(String.self, forKey: .sha256)
        error = try c.decodeIfPresent(TransferErrorInfo.self, forKey: .error)
        waitReason = try c.decodeIfPresent(String.self, forKey: .waitReason)
        folder = try c.decodeIfPresent(String.self, forKey: .folder) ?? "Downloads"
        taskDescription = try c.decodeIfPresent(String.self, forKey: .taskDescription)
        bytesPerSecond = try c.decodeIfPresent(Double.self, forKey: .bytesPerSecond)
        etaSeconds = try c.decodeIfPresent(Double.self, forKey: .etaSeconds)
        attempts = try c.decodeIfPresent(Int.self, forKey: .attempts) ?? 0
        retryAt = try c.decodeIfPresent(Date.self, forKey: .retryAt)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        updatedAt = try c.decode(Date.self, forKey: .updatedAt)
        completedAt = try c.decodeIfPresent(Date.self, forKey: .completedAt)
        kind = try c.decodeIfPresent(TransferKind.self, forKey: .kind) ?? .download
        method = try c.decodeIfPresent(String.self, forKey: .method)
        sourcePath = try c.decodeIfPresent(String.self, forKey: .sourcePath)
        uploadProtocol = try c.decodeIfPresent(UploadProtocol.self, forKey: .uploadProtocol)
        response = try c.decodeIfPresent(UploadResponse.self, forKey: .response)
        startAfter = try c.decodeIfPresent(Date.self, forKey: .startAfter)
        options = try c.decodeIfPresent(TransferOptions.self, forKey: .options)
        connections = try c.decodeIfPresent(Int.self, forKey: .connections)
        ranges = try c.decodeIfPresent([TransferRange].self, forKey: .ranges)
        mirrors = try c.decodeIfPresent([TransferMirror].self, forKey: .mirrors)
        directory = try c.decodeIfPresent(String.self, forKey: .directory)
        checksum = try c.decodeIfPresent(Checksum.self, forKey: .checksum)
        verifiedBy = try c.decodeIfPresent([String].self, forKey: .verifiedBy)
        priority = try c.decodeIfPresent(TransferPriority.self, forKey: .priority)
        fileMissing = try c.decodeIfPresent(Bool.self, forKey: .fileMissing)
        member = try c.decodeIfPresent(String.self, forKey: .member)
        requestedBy = try c.decodeIfPresent(String.self, forKey: .requestedBy)
        httpVersion = try c.decodeIfPresent(String.self, forKey: .httpVersion)
    }
}

/// One range of a segmented download: bytes `start..<end` of the file, of which the first
/// `bytes` are in the part file.
public struct TransferRange: Codable, Sendable, Hashable {
    public var start: Int64
    public var end: Int64
    public var bytes: Int64

    /// Each parameter sets the property of the same name.
    public init(start: Int64, end: Int64, bytes: Int64) {
        self.start = start
        self.end = end
        self.bytes = bytes
    }
}

/// A mirror of a download: another URL of the same file (same length, same validator). One that
/// answered that it has no such file, or a different one, is dropped for good, with the reason.
public struct TransferMirror: Codable, Sendable, Hashable {
    public var url: String
    /// Why it is no longer used ("answered 404 Not Found", "its copy is 12 bytes longer").
    public var dropped: String?

    /// Each parameter sets the property of the same name.
    public init(url: String, dropped: String? = nil) {
        self.url = url
        self.dropped = dropped
    }
}

/// A machine-readable code and a sentence for people, as in every Ferry error.
public struct TransferErrorInfo: Codable, Sendable, Hashable {
    /// A ``FerryError/Code`` raw value, e.g. `http_status`.
    public var code: String
    /// What happened and what to do, for people.
    public var message: String

    /// An error's code and message (``FerryError/info`` makes one from a ``FerryError``).
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

extension Transfer {
    /// How long the daemon waits for a paused or cancelled transfer's download to stop (its bytes
    /// made durable, or its partial file deleted) before it answers anyway: a disk that hangs in
    /// fsync must not hang the API.
    public static let stopWait = Duration.seconds(5)
}
