/// Every error Ferry reports: a stable machine-readable `code` and a `message` that says what
/// happened and what to do. The HTTP API renders it as `{"error": {"code": ..., "message": ...}}`,
/// the CLI as one line on stderr.
public struct FerryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier for a kind of error (`invalid_url`, `not_found`, ...).
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // Requests
        public static let invalidRequest = Code(rawValue: "invalid_request")
        public static let invalidURL = Code(rawValue: "invalid_url")
        public static let unsupportedScheme = Code(rawValue: "unsupported_scheme")
        public static let notFound = Code(rawValue: "not_found")
        public static let invalidState = Code(rawValue: "invalid_state")
        public static let unauthorized = Code(rawValue: "unauthorized")
        public static let forbiddenHost = Code(rawValue: "forbidden_host")
        public static let forbiddenOrigin = Code(rawValue: "forbidden_origin")
        public static let resumeDataInvalid = Code(rawValue: "resume_data_invalid")
        public static let resumeDataStale = Code(rawValue: "resume_data_stale")
        public static let internalError = Code(rawValue: "internal")
        // Transfers
        public static let httpStatus = Code(rawValue: "http_status")
        public static let connectionFailed = Code(rawValue: "connection_failed")
        public static let timeout = Code(rawValue: "timeout")
        public static let redirectRefused = Code(rawValue: "redirect_refused")
        public static let tooManyRedirects = Code(rawValue: "too_many_redirects")
        public static let lengthMismatch = Code(rawValue: "length_mismatch")
        public static let rangeMismatch = Code(rawValue: "range_mismatch")
        public static let diskFull = Code(rawValue: "disk_full")
        public static let fileSystem = Code(rawValue: "file_system")
        // Clients
        public static let daemonUnreachable = Code(rawValue: "daemon_unreachable")
        public static let daemonStartFailed = Code(rawValue: "daemon_start_failed")
        public static let badResponse = Code(rawValue: "bad_response")
        // Feeds
        public static let feedUnavailable = Code(rawValue: "feed_unavailable")
        public static let feedInvalid = Code(rawValue: "feed_invalid")
        public static let feedTooLarge = Code(rawValue: "feed_too_large")
        public static let opmlInvalid = Code(rawValue: "opml_invalid")
        // Catalog
        public static let catalogBadRequest = Code(rawValue: "catalog_bad_request")
        public static let catalogThrottled = Code(rawValue: "catalog_throttled")
        public static let catalogTimeout = Code(rawValue: "catalog_timeout")
        public static let catalogUnreachable = Code(rawValue: "catalog_unreachable")
        public static let catalogBadResponse = Code(rawValue: "catalog_bad_response")
        public static let cancelled = Code(rawValue: "cancelled")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The shape stored in a transfer's `error` field.
    public var info: TransferErrorInfo { TransferErrorInfo(code: code.rawValue, message: message) }

    public init(_ info: TransferErrorInfo) {
        self.init(Code(rawValue: info.code), info.message)
    }
}

extension FerryError {
    public static func invalidRequest(_ message: String) -> FerryError { .init(.invalidRequest, message) }
    public static func notFound(transfer id: Int64) -> FerryError {
        .init(.notFound, "There is no transfer \(id). `ferry ls --all` lists them.")
    }
    public static func invalidState(_ message: String) -> FerryError { .init(.invalidState, message) }
}
