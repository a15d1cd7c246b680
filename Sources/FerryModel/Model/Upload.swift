import Foundation

/// Whether a transfer brings a file here or sends one away.
public enum TransferKind: String, Codable, Sendable, CaseIterable {
    /// Fetches a URL into the library.
    case download
    /// Sends a local file to a URL.
    case upload
}

/// How an upload is sent.
public enum UploadProtocol: String, Codable, Sendable, CaseIterable {
    /// Ask the server (OPTIONS): tus if it speaks it, the IETF protocol if it advertises it,
    /// else a plain request.
    case auto
    /// One request with the whole file; an interrupted upload starts over.
    case plain
    /// tus 1.0 (`Tus-Resumable`): resumes from the server's `Upload-Offset`.
    case tus
    /// IETF HTTP resumable uploads (draft-ietf-httpbis-resumable-upload, as Apple's URLSession
    /// speaks it): resumes from the server's `Upload-Offset`.
    case ietf
}

/// `POST /v1/uploads`: send a file from this machine to a URL.
public struct CreateUploadRequest: Codable, Sendable {
    /// Absolute path of the file; it is read while it is sent, never copied.
    public var file: String
    /// Where to send the file (http or https).
    public var url: String
    /// `PUT` (default) or `POST`.
    public var method: String?
    /// Send as `multipart/form-data` with the file in this field, instead of the raw body.
    public var formField: String?
    /// How to send it (``UploadProtocol``).
    public var uploadProtocol: UploadProtocol?
    /// The session the upload belongs to.
    public var session: String?
    /// A label kept with the transfer.
    public var taskDescription: String?
    /// Overrides of the session's options for this upload.
    public var options: TransferOptions?

    /// Makes one from its fields; each parameter sets the property of the same name.
    /// Create the upload paused: it starts when resumed (as a URLSession task is made suspended).
    public var paused: Bool?

    public init(
        file: String, url: String, method: String? = nil, formField: String? = nil, uploadProtocol: UploadProtocol? = nil,
        session: String? = nil, taskDescription: String? = nil, options: TransferOptions? = nil, paused: Bool? = nil
    ) {
        self.paused = paused
        self.file = file
        self.url = url
        self.method = method
        self.formField = formField
        self.uploadProtocol = uploadProtocol
        self.session = session
        self.taskDescription = taskDescription
        self.options = options
    }
}

/// What the server answered to a completed (or failed) upload: its status, headers (sensitive
/// ones redacted) and the start of its body.
public struct UploadResponse: Codable, Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The response headers, sensitive values redacted.
    public var headers: [String: String]
    /// The body as text, at most 64 KiB.
    public var body: String?
    /// True when `body` holds only the start of a longer body.
    public var bodyTruncated: Bool

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(status: Int, headers: [String: String], body: String?, bodyTruncated: Bool) {
        self.status = status
        self.headers = headers
        self.body = body
        self.bodyTruncated = bodyTruncated
    }
}
