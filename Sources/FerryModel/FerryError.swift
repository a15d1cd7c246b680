/// Every error Ferry reports: a stable machine-readable `code` and a `message` that says what
/// happened and what to do. The HTTP API renders it as `{"error": {"code": ..., "message": ...}}`,
/// the CLI as one line on stderr.
public struct FerryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier for a kind of error (`invalid_url`, `not_found`, ...).
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        /// The code as it appears in JSON, e.g. `not_found`.
        public let rawValue: String
        /// A code from its JSON spelling. Codes this build does not know (from a newer daemon)
        /// are kept as they are.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The raw value, e.g. `not_found`.
        public var description: String { rawValue }

        // Requests
        /// The request is malformed or a value is out of range (HTTP 400).
        public static let invalidRequest = Code(rawValue: "invalid_request")
        /// A URL is not a valid absolute URL (HTTP 400).
        public static let invalidURL = Code(rawValue: "invalid_url")
        /// A URL's scheme is not `http` or `https` (HTTP 400).
        public static let unsupportedScheme = Code(rawValue: "unsupported_scheme")
        /// No transfer, podcast, episode or catalog item has that id (HTTP 404).
        public static let notFound = Code(rawValue: "not_found")
        /// The command does not apply in the transfer's current state, such as pausing a
        /// completed one (HTTP 409).
        public static let invalidState = Code(rawValue: "invalid_state")
        /// The API token is missing or wrong (HTTP 401).
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// The `Host` header does not name this machine: the daemon's guard against DNS
        /// rebinding (HTTP 403).
        public static let forbiddenHost = Code(rawValue: "forbidden_host")
        /// A state-changing request came from a web origin the daemon does not accept
        /// (HTTP 403).
        public static let forbiddenOrigin = Code(rawValue: "forbidden_origin")
        /// The credential may not do this: the web app's login setting hooks (HTTP 403).
        public static let forbidden = Code(rawValue: "forbidden")
        /// The blob is not Ferry resume data, comes from a newer Ferry, or belongs to another
        /// session or URL (HTTP 400).
        public static let resumeDataInvalid = Code(rawValue: "resume_data_invalid")
        /// The resume data is sound, but the daemon no longer has the transfer or its part
        /// file: start the download again (HTTP 410).
        public static let resumeDataStale = Code(rawValue: "resume_data_stale")
        /// In a cluster: another member took the transfer (this member's lease on it expired, and
        /// its fencing number is stale); this member's write was refused (HTTP 409).
        public static let leaseLost = Code(rawValue: "lease_lost")
        /// An unexpected failure inside the daemon (HTTP 500).
        public static let internalError = Code(rawValue: "internal")
        // Transfers
        /// The remote server answered with an error status; 5xx and 429 are retried.
        public static let httpStatus = Code(rawValue: "http_status")
        /// The remote server could not be reached, or the connection broke; retried.
        public static let connectionFailed = Code(rawValue: "connection_failed")
        /// The remote server stopped answering within the connect or idle timeout; retried.
        public static let timeout = Code(rawValue: "timeout")
        /// A redirect was not followed: no or an invalid `Location`, or a target Ferry refuses.
        public static let redirectRefused = Code(rawValue: "redirect_refused")
        /// The server's TLS certificate is not trusted, or not for its name.
        public static let untrustedCertificate = Code(rawValue: "untrusted_certificate")
        /// A redirect loop, or more redirects than Ferry follows.
        public static let tooManyRedirects = Code(rawValue: "too_many_redirects")
        /// The body was shorter or longer than the server's `Content-Length`; retried.
        public static let lengthMismatch = Code(rawValue: "length_mismatch")
        /// The server keeps answering range requests wrongly, so the download cannot continue.
        public static let rangeMismatch = Code(rawValue: "range_mismatch")
        /// The disk is full: free some space, then resume the transfer.
        public static let diskFull = Code(rawValue: "disk_full")
        /// A file or folder could not be created, written or moved.
        public static let fileSystem = Code(rawValue: "file_system")
        /// The finished file's digest is not the one expected (the checksum given, or the server's
        /// own digest header): nothing was placed under its name.
        public static let checksumMismatch = Code(rawValue: "checksum_mismatch")
        /// An upload's source file vanished or changed while it was sent: start a new upload.
        public static let sourceChanged = Code(rawValue: "source_changed")
        /// The upload server refused or contradicted the upload (no upload URL, a wrong offset).
        public static let uploadRejected = Code(rawValue: "upload_rejected")
        // Clients
        /// The daemon is not running or not answering, or no daemon ever ran here (no token).
        public static let daemonUnreachable = Code(rawValue: "daemon_unreachable")
        /// Starting the daemon (`ferry serve --detach`) failed; the message says why.
        public static let daemonStartFailed = Code(rawValue: "daemon_start_failed")
        /// The daemon's answer could not be read (unexpected JSON, bad base64...).
        public static let badResponse = Code(rawValue: "bad_response")
        // Feeds
        /// A podcast feed could not be fetched: a network error or an error status (HTTP 422).
        public static let feedUnavailable = Code(rawValue: "feed_unavailable")
        /// A podcast feed is not a feed Ferry can read (HTTP 422).
        public static let feedInvalid = Code(rawValue: "feed_invalid")
        /// The feed is private: it needs a user name and password, or refused the ones given.
        public static let feedCredentials = Code(rawValue: "feed_credentials")
        /// A podcast feed is larger than Ferry accepts (HTTP 422).
        public static let feedTooLarge = Code(rawValue: "feed_too_large")
        /// An OPML file to import cannot be read (HTTP 400).
        public static let opmlInvalid = Code(rawValue: "opml_invalid")
        /// A Metalink document to download from cannot be read, or names a file unsafely (HTTP 400).
        public static let metalinkInvalid = Code(rawValue: "metalink_invalid")
        // Catalog
        /// Apple's catalog refused the search or lookup (HTTP 400).
        public static let catalogBadRequest = Code(rawValue: "catalog_bad_request")
        /// Apple's catalog is limiting requests: try again in a minute (HTTP 429).
        public static let catalogThrottled = Code(rawValue: "catalog_throttled")
        /// Apple's catalog did not answer in time (HTTP 504).
        public static let catalogTimeout = Code(rawValue: "catalog_timeout")
        /// Apple's catalog could not be reached (HTTP 502).
        public static let catalogUnreachable = Code(rawValue: "catalog_unreachable")
        /// Apple's catalog answered with something Ferry cannot read (HTTP 502).
        public static let catalogBadResponse = Code(rawValue: "catalog_bad_response")
        /// A server asked who the user is (401) and Ferry has no credentials for it, or the
        /// server refused the ones it had, or its challenge cannot be answered.
        public static let authenticationFailed = Code(rawValue: "authentication_failed")
        /// The work was cancelled before it finished, such as a type-ahead search that a newer
        /// one replaced (HTTP 409).
        public static let cancelled = Code(rawValue: "cancelled")
    }

    /// What kind of error it is: match on this, never on the message.
    public let code: Code
    /// A sentence for people: what happened and what to do.
    public let message: String

    /// An error with a code and a message.
    /// - Parameters:
    ///   - code: the kind of error.
    ///   - message: what happened and what to do, in a full sentence.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// The shape stored in a transfer's `error` field.
    public var info: TransferErrorInfo { TransferErrorInfo(code: code.rawValue, message: message) }

    /// The error that a transfer's (or an error response's) `error` field describes: the
    /// inverse of ``info``.
    public init(_ info: TransferErrorInfo) {
        self.init(Code(rawValue: info.code), info.message)
    }
}

extension FerryError {
    /// An `invalid_request` error.
    /// - Parameter message: what is wrong with the request and how to fix it.
    public static func invalidRequest(_ message: String) -> FerryError { .init(.invalidRequest, message) }
    /// The `not_found` error for a transfer id that the daemon does not know.
    /// - Parameter id: the ``Transfer/id`` asked for.
    public static func notFound(transfer id: Int64) -> FerryError {
        .init(.notFound, "There is no transfer \(id). `ferry ls --all` lists them.")
    }
    /// An `invalid_state` error.
    /// - Parameter message: why the command does not apply now.
    public static func invalidState(_ message: String) -> FerryError { .init(.invalidState, message) }
}
