import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The daemon's HTTP API, for a daemon at a known address with a known token. Every method
/// throws ``FerryError``: the daemon's own error, or `daemon_unreachable` when it cannot be
/// reached. Use ``DaemonConnector`` to find (or start) the local daemon.
public struct DaemonClient: Sendable {
    /// e.g. `http://127.0.0.1:7447`
    public let baseURL: String
    let token: String
    let http: HTTPClient

    public init(baseURL: String, token: String, httpClient: HTTPClient = .shared) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.http = httpClient
    }

    // MARK: Transfers

    public func createTransfers(_ request: CreateTransfersRequest) async throws -> TransferList {
        try await send(.POST, "/v1/transfers", body: request)
    }

    /// - Parameter states: nil for every state.
    public func transfers(session: String? = nil, states: [TransferState]? = nil) async throws -> TransferList {
        var query: [String] = []
        if let session { query.append("session=\(Self.escape(session))") }
        if let states { query.append("state=\(states.map(\.rawValue).joined(separator: ","))") }
        return try await send(.GET, "/v1/transfers" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
    }

    public func transfer(_ id: Int64) async throws -> Transfer {
        try await send(.GET, "/v1/transfers/\(id)")
    }

    public func pause(_ id: Int64) async throws -> Transfer {
        try await send(.POST, "/v1/transfers/\(id)/pause")
    }

    public func resume(_ id: Int64) async throws -> Transfer {
        try await send(.POST, "/v1/transfers/\(id)/resume")
    }

    public func cancel(_ id: Int64, keepResumeData: Bool = false) async throws -> Transfer {
        try await send(.POST, "/v1/transfers/\(id)/cancel" + (keepResumeData ? "?keepResumeData=true" : ""))
    }

    public func remove(_ id: Int64, deleteFile: Bool = false) async throws {
        let _: Empty = try await send(.DELETE, "/v1/transfers/\(id)" + (deleteFile ? "?deleteFile=true" : ""))
    }

    /// The transfer's resume data blob (see ``ResumeData``).
    public func resumeData(_ id: Int64) async throws -> Data {
        let response: ResumeDataResponse = try await send(.GET, "/v1/transfers/\(id)/resume-data")
        guard let data = Data(base64Encoded: response.resumeData) else {
            throw FerryError(.badResponse, "The daemon sent resume data that is not base64.")
        }
        return data
    }

    // MARK: Sessions and daemon

    public func session(_ name: String) async throws -> SessionInfo {
        try await send(.GET, "/v1/sessions/\(Self.escape(name))")
    }

    public func acknowledge(session: String, through seq: Int64) async throws {
        let _: Empty = try await send(.POST, "/v1/sessions/\(Self.escape(session))/ack", body: AcknowledgeRequest(through: seq))
    }

    /// - Parameter timeout: how long to wait; a probe for a daemon that may be gone uses a short
    ///   one (AsyncHTTPClient keeps retrying a refused connection until the deadline).
    public func status(timeout: Duration = .seconds(60)) async throws -> DaemonStatus {
        try await send(.GET, "/v1/status", timeout: timeout)
    }

    /// Asks the daemon to checkpoint its transfers and exit.
    public func shutdown() async throws {
        let _: Empty = try await send(.POST, "/v1/shutdown")
    }

    /// Opens the session's event stream once (no reconnection; see ``DaemonConnector/events(session:after:)``).
    /// - Parameter after: the last event already handled; nil for "after the last acknowledged".
    public func openEventStream(session: String, after: Int64?) async throws -> HTTPClientResponse {
        var request = request(.GET, "/v1/sessions/\(Self.escape(session))/events")
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

    func send<Response: Decodable>(_ method: HTTPMethod, _ path: String, timeout: Duration = .seconds(60)) async throws -> Response {
        try await send(method, path, body: Optional<Int>.none, timeout: timeout)
    }

    func send<Body: Encodable, Response: Decodable>(
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
    func decode<Response: Decodable>(_ request: HTTPClientRequest, timeout: Duration) async throws -> Response {
        let response = try await execute(request, timeout: .init(timeout))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        guard (200...299).contains(response.status.code) else { throw Self.error(status: response.status, body: bytes) }
        if Response.self == Empty.self { return Empty() as! Response }
        do {
            return try FerryJSON.decoder().decode(Response.self, from: Data(bytes.readableBytesView))
        } catch {
            throw FerryError(.badResponse, "The daemon's answer to \(request.method) \(request.url) could not be read: \(error).")
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
