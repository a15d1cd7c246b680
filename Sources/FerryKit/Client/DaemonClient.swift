import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The daemon's HTTP API, for a daemon at a known address with a known token. Every method
/// throws ``FerryError``: the daemon's own error, or `daemon_unreachable` when it cannot be
/// reached. Use ``DaemonConnector`` to find (or start) the local daemon.
public struct DaemonClient: Sendable {
    /// The API's base URL without a trailing slash, e.g. `http://127.0.0.1:7447`.
    public let baseURL: String
    let token: String
    let http: HTTPClient

    /// A client for the daemon at `baseURL`.
    /// - Parameters:
    ///   - baseURL: the API's base URL (``DaemonInfo/url``); a trailing slash is ignored.
    ///   - token: the API token (``DaemonToken/read(_:)``), sent as a Bearer token.
    ///   - httpClient: the client that sends the requests.
    public init(baseURL: String, token: String, httpClient: HTTPClient = .shared) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.http = httpClient
    }

    // MARK: Transfers

    /// Starts downloads, or continues one from resume data (`POST /v1/transfers`).
    /// - Returns: one transfer per URL, in order (an existing one for a URL the session already
    ///   downloads, unless `force`), and the journal's newest event number from just before.
    /// - Throws: ``FerryError`` `invalid_url` or `unsupported_scheme` (then nothing is created),
    ///   `resume_data_invalid`, `resume_data_stale`.
    public func createTransfers(_ request: CreateTransfersRequest) async throws -> TransferList {
        try await send(.POST, "/v1/transfers", body: request)
    }

    /// ``createTransfers(_:)``, its answer decoded when the returned closure is called: the CLI
    /// sends the next batch of a long list while it reads this one's answer.
    package func createTransfersDecodedLater(_ request: CreateTransfersRequest) async throws -> @Sendable () throws -> TransferList {
        try await answer(try creation(request), timeout: .seconds(60))
    }

    /// Starts downloads as ``createTransfers(_:)`` does, answered with their ids and states alone
    /// (`Prefer: return=minimal`): for long lists, where the whole transfers would cost the
    /// daemon and this process more than queueing them.
    /// - Returns: an id and a state per URL, in order.
    public func createTransferIDs(_ request: CreateTransfersRequest) async throws -> CreatedTransferIDs {
        var prepared = try creation(request)
        prepared.headers.add(name: "Prefer", value: "return=minimal")
        return try await decode(prepared, timeout: .seconds(60))
    }

    private func creation(_ request: CreateTransfersRequest) throws -> HTTPClientRequest {
        var prepared = self.request(.POST, "/v1/transfers")
        prepared.headers.add(name: "Content-Type", value: "application/json")
        prepared.body = .bytes(ByteBuffer(bytes: try FerryJSON.encoder().encode(request)))
        return prepared
    }

    /// Starts an upload of a local file (`POST /v1/uploads`).
    /// - Returns: the new transfer (``Transfer/kind`` `.upload`), and the journal's newest event
    ///   number from just before.
    /// - Throws: ``FerryError`` `invalid_url`, `unsupported_scheme`, `invalid_request` (relative
    ///   path, method other than PUT/POST, bad options), `file_system` for a file that cannot be
    ///   read.
    public func upload(_ request: CreateUploadRequest) async throws -> TransferList {
        try await send(.POST, "/v1/uploads", body: request)
    }

    // MARK: Configuration

    /// A session's options (`GET /v1/sessions/{session}/config`), sensitive header values
    /// redacted.
    public func sessionConfiguration(_ session: String) async throws -> SessionConfiguration {
        try await send(.GET, "/v1/sessions/\(Self.escape(session))/config")
    }

    /// Changes a session's options (`PATCH /v1/sessions/{session}/config`).
    /// - Throws: ``FerryError`` `invalid_request` naming a value out of range or an unknown field.
    public func updateSessionConfiguration(_ session: String, _ update: TransferOptionsUpdate) async throws -> SessionConfiguration {
        try await send(.PATCH, "/v1/sessions/\(Self.escape(session))/config", body: update)
    }

    /// The daemon-wide options (`GET /v1/config`): limits for all transfers together.
    public func daemonConfiguration() async throws -> TransferOptions {
        try await send(.GET, "/v1/config")
    }

    /// Changes the daemon-wide options (`PATCH /v1/config`).
    public func updateDaemonConfiguration(_ update: TransferOptionsUpdate) async throws -> TransferOptions {
        try await send(.PATCH, "/v1/config", body: update)
    }

    /// Lists transfers, oldest first (`GET /v1/transfers`).
    /// - Parameters:
    ///   - session: only this session's transfers; nil for every session's.
    ///   - states: only transfers in these states; nil for every state.
    /// - Returns: the transfers, and the journal's newest event number when they were read.
    /// - Parameters:
    ///   - limit: a page of at most this many; the list's ``TransferList/nextCursor`` asks for
    ///     the next one (as `cursor`).
    ///   - newestFirst: by id descending.
    public func transfers(
        session: String? = nil, states: [TransferState]? = nil, limit: Int? = nil, cursor: String? = nil, newestFirst: Bool = false
    ) async throws -> TransferList {
        var query: [String] = []
        if let session { query.append("session=\(Self.escape(session))") }
        if let states { query.append("state=\(states.map(\.rawValue).joined(separator: ","))") }
        if let limit { query.append("limit=\(limit)") }
        if let cursor { query.append("cursor=\(Self.escape(cursor))") }
        if newestFirst { query.append("order=desc") }
        return try await send(.GET, "/v1/transfers" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
    }

    /// One transfer.
    /// - Throws: ``FerryError`` `not_found` for an unknown id.
    public func transfer(_ id: Int64) async throws -> Transfer {
        try await send(.GET, "/v1/transfers/\(id)")
    }

    /// Pauses a transfer, keeping its bytes on disk. Returns once the download has stopped and
    /// its bytes are durable (the daemon waits up to ``Transfer/stopWait`` for a slow disk).
    /// - Returns: the transfer as it is now: `bytesReceived` is where a resume continues.
    /// - Throws: ``FerryError`` `invalid_state` for a completed, failed or cancelled transfer.
    /// Changes where a transfer stands in the queue (`PATCH /v1/transfers/{id}`).
    /// - Returns: the transfer as it is now.
    public func update(_ id: Int64, _ update: TransferUpdate) async throws -> Transfer {
        try await send(.PATCH, "/v1/transfers/\(id)", body: update)
    }

    /// Pauses every queued, running and waiting transfer, or a session's.
    /// - Returns: the transfers paused.
    public func pauseAll(session: String? = nil) async throws -> TransferList {
        try await send(.POST, "/v1/transfers/pause-all" + (session.map { "?session=\(Self.escape($0))" } ?? ""))
    }

    /// Resumes every paused transfer, or a session's.
    /// - Returns: the transfers resumed.
    public func resumeAll(session: String? = nil) async throws -> TransferList {
        try await send(.POST, "/v1/transfers/resume-all" + (session.map { "?session=\(Self.escape($0))" } ?? ""))
    }

    public func pause(_ id: Int64) async throws -> Transfer {
        try await send(.POST, "/v1/transfers/\(id)/pause")
    }

    /// Resumes a paused or failed transfer (it joins the queue again), or makes a waiting one try
    /// now; a queued or running one is left as it is.
    /// - Returns: the transfer as it is now.
    /// - Throws: ``FerryError`` `invalid_state` for a completed or cancelled transfer.
    public func resume(_ id: Int64) async throws -> Transfer {
        try await send(.POST, "/v1/transfers/\(id)/resume")
    }

    /// Resumes a transfer from a new URL of the same file (an expired signed link): the bytes on
    /// disk are kept when the new URL's answer has the same validator and length.
    public func resume(_ id: Int64, url: String) async throws -> Transfer {
        try await send(.POST, "/v1/transfers/\(id)/resume", body: ResumeRequest(url: url))
    }

    /// Resumes a transfer to start no earlier than `date`.
    public func resume(_ id: Int64, startAfter date: Date) async throws -> Transfer {
        try await send(.POST, "/v1/transfers/\(id)/resume", body: ResumeRequest(startAfter: date))
    }

    /// Forgets every completed and cancelled transfer (of `session`, else of all); files stay.
    /// - Returns: the ids forgotten.
    public func removeFinished(session: String? = nil) async throws -> [Int64] {
        let query = "?finished=true" + (session.map { "&session=\(Self.escape($0))" } ?? "")
        let removed: RemovedTransfers = try await send(.DELETE, "/v1/transfers" + query)
        return removed.ids
    }

    /// Stops a transfer for good.
    /// - Parameters:
    ///   - id: the ``Transfer/id``.
    ///   - keepResumeData: keep the part file, so that ``resumeData(_:)`` can continue the
    ///     transfer later; otherwise the part file is deleted.
    /// - Returns: the cancelled transfer.
    /// - Throws: ``FerryError`` `invalid_state` for a completed transfer.
    public func cancel(_ id: Int64, keepResumeData: Bool = false) async throws -> Transfer {
        try await send(.POST, "/v1/transfers/\(id)/cancel" + (keepResumeData ? "?keepResumeData=true" : ""))
    }

    /// Forgets a transfer, cancelling it first if it is unfinished; its id is gone afterwards.
    /// - Parameters:
    ///   - id: the ``Transfer/id``.
    ///   - deleteFile: also delete a completed transfer's file from the library.
    public func remove(_ id: Int64, deleteFile: Bool = false) async throws {
        let _: Empty = try await send(.DELETE, "/v1/transfers/\(id)" + (deleteFile ? "?deleteFile=true" : ""))
    }

    /// The transfer's resume data blob (see ``ResumeData``).
    /// - Throws: ``FerryError`` `resume_data_stale` when the transfer was cancelled without
    ///   keeping its bytes, `invalid_state` when it is completed.
    public func resumeData(_ id: Int64) async throws -> Data {
        let response: ResumeDataResponse = try await send(.GET, "/v1/transfers/\(id)/resume-data")
        guard let data = Data(base64Encoded: response.resumeData) else {
            throw FerryError(.badResponse, "The daemon sent resume data that is not base64.")
        }
        return data
    }

    // MARK: Sessions and daemon

    /// A session's acknowledged event number and the journal's newest one.
    public func session(_ name: String) async throws -> SessionInfo {
        try await send(.GET, "/v1/sessions/\(Self.escape(name))")
    }

    /// Marks the session's events up to and including `seq` as handled: the daemon no longer
    /// replays them.
    /// - Parameters:
    ///   - session: the session's identifier.
    ///   - seq: the ``TransferEvent/seq`` of the newest event handled.
    /// Ends a session for good (`DELETE /v1/sessions/{session}`): its unfinished transfers are
    /// cancelled, its events, acknowledgement and options deleted.
    /// A session's cookie jar, values redacted (`GET /v1/sessions/{session}/cookies`).
    public func cookies(session: String) async throws -> CookieList {
        try await send(.GET, "/v1/sessions/\(Self.escape(session))/cookies")
    }

    /// Puts a cookies.txt file's cookies (Netscape format) into a session's jar.
    /// - Throws: ``FerryError`` `invalid_request` naming the first malformed line.
    public func importCookies(_ text: String, session: String) async throws -> CookieJarChange {
        var request = request(.POST, "/v1/sessions/\(Self.escape(session))/cookies")
        request.headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        request.body = .bytes(ByteBuffer(string: text))
        return try await decode(request, timeout: .seconds(60))
    }

    /// A session's cookies as a cookies.txt file, values and all (the API token only).
    public func exportCookies(session: String) async throws -> String {
        let request = request(.GET, "/v1/sessions/\(Self.escape(session))/cookies.txt")
        let response = try await http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 16 << 20)
        guard response.status == .ok else { throw Self.error(status: response.status, body: body) }
        return String(buffer: body)
    }

    /// Logs a session in to a site: the daemon POSTs the form and keeps the cookies it is given.
    public func logIn(session: String, _ request: SessionLoginRequest) async throws -> SessionLogin {
        try await send(.POST, "/v1/sessions/\(Self.escape(session))/login", body: request)
    }

    /// Empties a session's cookie jar.
    public func clearCookies(session: String) async throws -> CookieJarChange {
        try await send(.DELETE, "/v1/sessions/\(Self.escape(session))/cookies")
    }

    public func forgetSession(_ session: String) async throws -> ForgottenSession {
        try await send(.DELETE, "/v1/sessions/\(Self.escape(session))")
    }

    public func acknowledge(session: String, through seq: Int64) async throws {
        let _: Empty = try await send(.POST, "/v1/sessions/\(Self.escape(session))/ack", body: AcknowledgeRequest(through: seq))
    }

    /// The daemon's version, address, folders and transfer counts (`GET /v1/status`).
    /// - Parameter timeout: how long to wait; a probe for a daemon that may be gone uses a short
    ///   one (AsyncHTTPClient keeps retrying a refused connection until the deadline).
    public func status(timeout: Duration = .seconds(60)) async throws -> DaemonStatus {
        try await send(.GET, "/v1/status", timeout: timeout)
    }

    /// What is wrong with this Ferry (`GET /v1/doctor`), or with `fix` what was mended
    /// (`POST /v1/doctor`): an admin's.
    public func doctor(fix: Bool) async throws -> DoctorReport {
        try await send(fix ? .POST : .GET, "/v1/doctor", timeout: .seconds(600))
    }

    /// The cluster this daemon is a member of (`invalid_state` when it runs on its own).
    public func cluster() async throws -> ClusterStatus {
        try await send(.GET, "/v1/cluster")
    }

    /// Asks the daemon to checkpoint its transfers and exit.
    public func shutdown() async throws {
        let _: Empty = try await send(.POST, "/v1/shutdown")
    }

    /// Opens an event stream once (no reconnection; see ``DaemonConnector/events(session:after:)``).
    /// - Parameters:
    ///   - session: the session whose events to stream; nil for every session's.
    ///   - after: the last event already handled; nil for "after the last acknowledged" (for a
    ///     session) or "from now" (for all sessions).
    public func openEventStream(session: String?, after: Int64?) async throws -> HTTPClientResponse {
        var request = request(.GET, session.map { "/v1/sessions/\(Self.escape($0))/events" } ?? "/v1/events")
        request.headers.replaceOrAdd(name: "Accept", value: "text/event-stream")
        if let after { request.headers.replaceOrAdd(name: "Last-Event-ID", value: String(after)) }
        let response = try await execute(request, timeout: .hours(24 * 365))
        guard response.status == .ok else { throw try await Self.error(from: response) }
        return response
    }

    // MARK: Plumbing

    struct Empty: Decodable {}

    func request(_ method: HTTPMethod, _ path: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "User-Agent", value: "FerryKit/\(FerryVersion.current)")
        return request
    }

    func send<Response: Decodable & Sendable>(_ method: HTTPMethod, _ path: String, timeout: Duration = .seconds(60)) async throws -> Response {
        try await send(method, path, body: Optional<Int>.none, timeout: timeout)
    }

    func send<Body: Encodable, Response: Decodable & Sendable>(
        _ method: HTTPMethod, _ path: String, body: Body?, timeout: Duration = .seconds(60)
    ) async throws -> Response {
        var request = request(method, path)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try FerryJSON.encoder().encode(body)))
        }
        return try await decode(request, timeout: timeout)
    }

    /// Sends a prepared request and decodes its JSON answer (or the daemon's error).
    func decode<Response: Decodable & Sendable>(_ request: HTTPClientRequest, timeout: Duration) async throws -> Response {
        try await answer(request, timeout: timeout)()
    }

    /// Sends a prepared request and collects its answer (or throws the daemon's error); the
    /// closure decodes it, when the caller is ready to.
    func answer<Response: Decodable & Sendable>(_ request: HTTPClientRequest, timeout: Duration) async throws -> @Sendable () throws -> Response {
        let response = try await execute(request, timeout: .init(timeout))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        guard (200...299).contains(response.status.code) else { throw Self.error(status: response.status, body: bytes) }
        let description = "\(request.method) \(request.url)"
        return {
            if Response.self == Empty.self { return Empty() as! Response }
            do {
                return try FerryJSON.decoder().decode(Response.self, from: Data(bytes.readableBytesView))
            } catch {
                throw FerryError(.badResponse, "The daemon's answer to \(description) could not be read: \(error).")
            }
        }
    }

    private func execute(_ request: HTTPClientRequest, timeout: TimeAmount) async throws -> HTTPClientResponse {
        do {
            return try await http.execute(request, timeout: timeout)
        } catch {
            throw FerryError(.daemonUnreachable, "The Ferry daemon at \(baseURL) is not answering (\(error)).")
        }
    }

    static func error(from response: HTTPClientResponse) async throws -> FerryError {
        error(status: response.status, body: try await response.body.collect(upTo: 1 << 20))
    }

    static func error(status: HTTPResponseStatus, body: ByteBuffer) -> FerryError {
        if let decoded = try? FerryJSON.decoder().decode(ErrorResponse.self, from: Data(body.readableBytesView)) {
            return FerryError(decoded.error)
        }
        return FerryError(.badResponse, "The daemon answered \(status.code) \(status.reasonPhrase).")
    }

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?&=#"))) ?? text
    }
}
