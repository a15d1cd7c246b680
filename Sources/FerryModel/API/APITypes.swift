import Foundation

/// `POST /v1/transfers`: start downloads of one or many URLs, or continue one from resume data.
public struct CreateTransfersRequest: Codable, Sendable {
    /// The URLs to download (http or https).
    public var urls: [String]?
    /// A blob from ``ResumeData/encoded()``, instead of `urls`.
    public var resumeData: String?
    /// The session the transfers belong to; `cli` when absent.
    public var session: String?
    /// Download again even if the same URL is already queued, running or completed in the session.
    public var force: Bool?
    /// A label kept with the transfer.
    public var taskDescription: String?
    /// Overrides of the session's options for these transfers (headers, rate, start date...).
    public var options: TransferOptions?
    /// Other URLs of the same file (with one URL only): ranges are fetched from all of them,
    /// and one that fails or differs is dropped while the download goes on.
    public var mirrors: [String]?
    /// The folder the files go to, an absolute path (else the session's folder, else the
    /// library's Downloads/). It must exist, unless `createDirectory`, and be writable.
    public var directory: String?
    /// The file's name (with one URL): a name, not a path. Else the server's or the URL's.
    public var filename: String?
    /// Replace a file of the same name instead of naming the new one `name (2).ext`.
    public var overwrite: Bool?
    /// Create `directory` (and its parents) when it does not exist.
    public var createDirectory: Bool?
    /// The digest the file must have, `sha-256=HEX` (also `sha-512`, `sha-1`, `md5`; with one
    /// URL): checked before the file is placed, a mismatch fails it with `checksum_mismatch`.
    public var checksum: String?
    /// Which queued transfers start first: high before normal (the default) before low.
    public var priority: TransferPriority?
    /// Create the transfers paused: they start when resumed (as a URLSession task is made
    /// suspended and starts with `resume()`).
    public var paused: Bool?
    /// A Metalink document (version 4, `.meta4`, or 3, `.metalink`), instead of `urls`: a
    /// transfer for each of its files, from its mirrors, checked against its digest.
    public var metalink: String?
    /// A Metalink's URL, instead of `metalink`: the daemon fetches it (16 MiB at most) as the
    /// session's downloads are fetched.
    public var metalinkURL: String?
    /// With `metalink`: country codes (`de`, `fr`) whose mirrors are tried first.
    public var metalinkLocations: [String]?

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(
        urls: [String]? = nil, resumeData: String? = nil, session: String? = nil, force: Bool? = nil,
        taskDescription: String? = nil, options: TransferOptions? = nil, mirrors: [String]? = nil,
        directory: String? = nil, filename: String? = nil, overwrite: Bool? = nil, createDirectory: Bool? = nil,
        checksum: String? = nil, priority: TransferPriority? = nil, paused: Bool? = nil, metalink: String? = nil,
        metalinkURL: String? = nil, metalinkLocations: [String]? = nil
    ) {
        self.metalink = metalink
        self.metalinkURL = metalinkURL
        self.metalinkLocations = metalinkLocations
        self.urls = urls
        self.resumeData = resumeData
        self.session = session
        self.force = force
        self.taskDescription = taskDescription
        self.options = options
        self.mirrors = mirrors
        self.directory = directory
        self.filename = filename
        self.overwrite = overwrite
        self.createDirectory = createDirectory
        self.checksum = checksum
        self.priority = priority
        self.paused = paused
    }
}

/// `POST /v1/transfers/{id}/resume` (the body is optional).
public struct ResumeRequest: Codable, Sendable {
    /// A new URL of the same file (an expired signed link): the bytes on disk are kept if its
    /// answer has the same validator and length, else the download starts over and says why.
    public var url: String?
    /// Not before this date: back in the queue, it waits until then (URLSession's
    /// `earliestBeginDate`).
    public var startAfter: Date?
    /// Each parameter sets the property of the same name.
    public init(url: String? = nil, startAfter: Date? = nil) {
        self.url = url
        self.startAfter = startAfter
    }
}

/// `DELETE /v1/transfers?finished=true`: the transfers forgotten.
public struct RemovedTransfers: Codable, Sendable {
    public var ids: [Int64]
    /// Each parameter sets the property of the same name.
    public init(ids: [Int64]) { self.ids = ids }
}

/// A list of transfers, with the newest journal sequence number at the moment it was read: an
/// event stream opened after that number misses nothing that happened since.
public struct TransferList: Codable, Sendable {
    /// The transfers, oldest first.
    public var transfers: [Transfer]
    /// The journal's newest event number when the list was read: follow the event stream from
    /// here (`Last-Event-ID`) to miss nothing.
    public var lastEventSeq: Int64
    /// A page of a longer list (`?limit=`): pass this as `cursor` for the next page; nil on the
    /// last page.
    public var nextCursor: String?

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(transfers: [Transfer], lastEventSeq: Int64, nextCursor: String? = nil) {
        self.transfers = transfers
        self.lastEventSeq = lastEventSeq
        self.nextCursor = nextCursor
    }
}

/// `POST /v1/transfers` asked with `Prefer: return=minimal`: each new transfer's id and state, in
/// the order of the request's URLs, and nothing else (a queue of half a million from a list needs
/// no more, and the rest costs both sides more than the queueing).
public struct CreatedTransferIDs: Codable, Sendable, Hashable {
    public var ids: [Int64]
    public var states: [TransferState]
    /// As ``TransferList/lastEventSeq``.
    public var lastEventSeq: Int64

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(ids: [Int64], states: [TransferState], lastEventSeq: Int64) {
        self.ids = ids
        self.states = states
        self.lastEventSeq = lastEventSeq
    }
}

/// `GET /v1/transfers/{id}/resume-data`.
public struct ResumeDataResponse: Codable, Sendable {
    /// The opaque blob, base64.
    public var resumeData: String
    /// Wraps a base64 resume data blob.
    public init(resumeData: String) { self.resumeData = resumeData }
}

/// `POST /v1/sessions/{session}/ack`.
public struct AcknowledgeRequest: Codable, Sendable {
    /// Every event of the session with `seq <= through` has been handled.
    public var through: Int64
    /// Acknowledges every event of the session up to `through`.
    public init(through: Int64) { self.through = through }
}

/// `DELETE /v1/sessions/{session}`: what forgetting a session did.
public struct ForgottenSession: Codable, Sendable {
    /// The session's identifier.
    public var name: String
    /// How many of its events were deleted.
    public var eventsDeleted: Int
    /// Its unfinished transfers, cancelled (they stay listed; their part files go).
    public var cancelled: [Int64]

    /// Each parameter sets the property of the same name.
    public init(name: String, eventsDeleted: Int, cancelled: [Int64]) {
        self.name = name
        self.eventsDeleted = eventsDeleted
        self.cancelled = cancelled
    }
}

/// `GET /v1/sessions/{session}`.
public struct SessionInfo: Codable, Sendable {
    /// The session's identifier.
    public var name: String
    /// The newest event the session has acknowledged (0: none); its events stream from here.
    public var acknowledgedSeq: Int64
    /// The newest event in the journal, of any session.
    public var lastEventSeq: Int64
    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(name: String, acknowledgedSeq: Int64, lastEventSeq: Int64) {
        self.name = name
        self.acknowledgedSeq = acknowledgedSeq
        self.lastEventSeq = lastEventSeq
    }
}

/// The data of the `replayed` event an event stream sends once it has replayed the journal, before
/// any live event: a client reading what it missed knows it has all of it.
public struct ReplayEnd: Codable, Sendable, Equatable {
    /// The SSE event name.
    public static let eventName = "replayed"
    /// The sequence number of the last event replayed (the starting point when there was none).
    public var through: Int64
    /// Makes one from its field.
    public init(through: Int64) { self.through = through }
}

/// The first message of an event stream whose starting point (`Last-Event-ID`, `after`, or the
/// session's acknowledgement) is older than what the daemon still keeps: events after it were
/// pruned (``EventRetention``), so the client re-reads the state (`GET /v1/transfers`) instead
/// of counting on the replay.
public struct Resync: Codable, Sendable, Equatable {
    /// The SSE event name.
    public static let eventName = "resync"
    /// The newest sequence number pruned for this stream's session (all sessions' for `/v1/events`).
    public var prunedThrough: Int64
    /// Makes one from its field.
    public init(prunedThrough: Int64) { self.prunedThrough = prunedThrough }
}

/// `GET /v1/status`.
public struct DaemonStatus: Codable, Sendable {
    /// The daemon's Ferry version.
    public var version: String
    /// The daemon's process id.
    public var pid: Int32
    /// The API's base URL, e.g. `http://127.0.0.1:7447`.
    public var url: String
    /// When the daemon started.
    public var startedAt: Date
    /// The absolute path of the library folder.
    public var libraryPath: String
    /// The absolute path of the state folder (journal, token, `daemon.json`).
    public var statePath: String
    /// How many transfers the daemon runs at once.
    public var maxConcurrent: Int
    /// Number of transfers in each state, keyed by ``TransferState`` raw value (`running`).
    public var counts: [String: Int]
    /// The newest event number in the journal.
    public var lastEventSeq: Int64
    /// Where phones sync (`ferry serve --sync-listen`), when it is on.
    public var syncURL: String?
    /// aria2's JSON-RPC endpoint (`ferry serve --aria2-rpc`), when it is on.
    public var aria2URL: String?

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(
        version: String, pid: Int32, url: String, startedAt: Date, libraryPath: String,
        statePath: String, maxConcurrent: Int, counts: [String: Int], lastEventSeq: Int64, syncURL: String? = nil, aria2URL: String? = nil
    ) {
        self.syncURL = syncURL
        self.aria2URL = aria2URL
        self.version = version
        self.pid = pid
        self.url = url
        self.startedAt = startedAt
        self.libraryPath = libraryPath
        self.statePath = statePath
        self.maxConcurrent = maxConcurrent
        self.counts = counts
        self.lastEventSeq = lastEventSeq
    }
}

/// The body of every error response: `{"error": {"code": ..., "message": ...}}`.
public struct ErrorResponse: Codable, Sendable {
    /// The error's code and message.
    public var error: TransferErrorInfo
    /// The body for an error (``FerryError/info`` gives its `error`).
    public init(error: TransferErrorInfo) { self.error = error }
}

/// How the API encodes and decodes JSON: ISO 8601 dates, stable key order.
public enum FerryJSON {
    /// An encoder for the API's JSON: ISO 8601 dates, sorted keys, unescaped slashes.
    /// - Parameter pretty: indent the output, for people (`ferry ls --json`).
    public static func encoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// A decoder for the API's JSON (ISO 8601 dates).
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

/// The body of `POST /v1/login-links` (optional): whom the link signs in.
public struct LoginLinkRequest: Codable, Sendable {
    /// An account's name: the link signs that account in (its places, its role). Absent: the
    /// machine's owner, an admin.
    public var user: String?
    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(user: String? = nil) {
        self.user = user
    }
}

/// `POST /v1/login-links`: a one-time link that logs a browser into the web app.
public struct LoginLink: Codable, Sendable {
    /// The link to open in a browser; it works once.
    public var url: String
    /// How long the link stays valid.
    public var expiresInSeconds: Int
    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(url: String, expiresInSeconds: Int) {
        self.url = url
        self.expiresInSeconds = expiresInSeconds
    }
}
