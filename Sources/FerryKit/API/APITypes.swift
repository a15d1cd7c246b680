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

    public init(
        urls: [String]? = nil, resumeData: String? = nil, session: String? = nil, force: Bool? = nil,
        taskDescription: String? = nil
    ) {
        self.urls = urls
        self.resumeData = resumeData
        self.session = session
        self.force = force
        self.taskDescription = taskDescription
    }
}

/// A list of transfers, with the newest journal sequence number at the moment it was read: an
/// event stream opened after that number misses nothing that happened since.
public struct TransferList: Codable, Sendable {
    public var transfers: [Transfer]
    public var lastEventSeq: Int64

    public init(transfers: [Transfer], lastEventSeq: Int64) {
        self.transfers = transfers
        self.lastEventSeq = lastEventSeq
    }
}

/// `GET /v1/transfers/{id}/resume-data`.
public struct ResumeDataResponse: Codable, Sendable {
    /// The opaque blob, base64.
    public var resumeData: String
    public init(resumeData: String) { self.resumeData = resumeData }
}

/// `POST /v1/sessions/{session}/ack`.
public struct AcknowledgeRequest: Codable, Sendable {
    /// Every event of the session with `seq <= through` has been handled.
    public var through: Int64
    public init(through: Int64) { self.through = through }
}

/// `GET /v1/sessions/{session}`.
public struct SessionInfo: Codable, Sendable {
    public var name: String
    public var acknowledgedSeq: Int64
    public var lastEventSeq: Int64
    public init(name: String, acknowledgedSeq: Int64, lastEventSeq: Int64) {
        self.name = name
        self.acknowledgedSeq = acknowledgedSeq
        self.lastEventSeq = lastEventSeq
    }
}

/// `GET /v1/status`.
public struct DaemonStatus: Codable, Sendable {
    public var version: String
    public var pid: Int32
    public var url: String
    public var startedAt: Date
    public var libraryPath: String
    public var statePath: String
    public var maxConcurrent: Int
    /// Number of transfers in each state.
    public var counts: [String: Int]
    public var lastEventSeq: Int64

    public init(
        version: String, pid: Int32, url: String, startedAt: Date, libraryPath: String,
        statePath: String, maxConcurrent: Int, counts: [String: Int], lastEventSeq: Int64
    ) {
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
    public var error: TransferErrorInfo
    public init(error: TransferErrorInfo) { self.error = error }
}

/// How the API encodes and decodes JSON: ISO 8601 dates, stable key order.
public enum FerryJSON {
    public static func encoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

/// `POST /v1/login-links`: a one-time link that logs a browser into the web app.
public struct LoginLink: Codable, Sendable {
    public var url: String
    public var expiresInSeconds: Int
    public init(url: String, expiresInSeconds: Int) {
        self.url = url
        self.expiresInSeconds = expiresInSeconds
    }
}
