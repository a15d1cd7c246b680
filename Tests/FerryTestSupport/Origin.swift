import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import Synchronization

/// A real HTTP server on loopback standing in for the internet in tests: it serves files with
/// ETag, Last-Modified, Range and If-Range, and misbehaves on cue (scripted faults, redirects,
/// throttling). It records every request and counts the bytes it sends.
package final class Origin: Sendable {
    package struct File: Sendable {
        package var data: Data
        /// A strong (`"v1"`) or weak (`W/"v1"`) ETag, or nil.
        package var etag: String?
        package var lastModified: String?
        package var contentType: String?
        package var contentDisposition: String?
        /// When false, Range is ignored and the whole file is always sent with 200.
        package var honorsRanges: Bool
        /// Throttle: bytes per second, nil for full speed.
        package var bytesPerSecond: Int?
        /// More response headers (a digest header: `Repr-Digest`, `Content-Digest`, `Digest`).
        package var extraHeaders: [String: String] = [:]

        package init(
            data: Data, etag: String? = "\"v1\"", lastModified: String? = "Sun, 06 Nov 1994 08:49:37 GMT",
            contentType: String? = "application/octet-stream", contentDisposition: String? = nil,
            honorsRanges: Bool = true, bytesPerSecond: Int? = nil
        ) {
            self.data = data
            self.etag = etag
            self.lastModified = lastModified
            self.contentType = contentType
            self.contentDisposition = contentDisposition
            self.honorsRanges = honorsRanges
            self.bytesPerSecond = bytesPerSecond
        }

        package var sha256: String { Origin.sha256(data) }
    }

    /// One scripted misbehaviour, used by the next request for its path.
    package enum Fault: Sendable {
        /// Answer with this status (and a body that must never be saved).
        case status(Int, retryAfter: String? = nil)
        /// Send the headers and this many body bytes, then drop the connection.
        case dropAfter(Int)
        /// Send this many body bytes, then stall for the duration.
        case stallAfter(Int, Duration)
        /// Announce this many bytes more than the file has, send the file, close.
        case contentLengthExtra(Int)
        /// Answer a range request with a 206 that starts at the wrong offset.
        case wrongRangeStart
        /// Send this many body bytes, then wait until the test opens the gate.
        case holdAfter(Int, Gate)
        /// Ignore the Range header: the whole file with 200.
        case ignoreRange
        /// Nothing: this request is served as usual (to reach a later request with a fault).
        case normal
    }

    /// Holds responses (``Fault/holdAfter(_:_:)``) until the test opens it, so a test can act
    /// while a download is certainly under way instead of racing its length. The origin opens
    /// every gate it was given when the test's body ends.
    package final class Gate: Sendable {
        private let waiters = Mutex<[CheckedContinuation<Void, Never>]?>([])

        package init() {}

        package func open() {
            for waiter in waiters.withLock({ waiters in defer { waiters = nil }; return waiters ?? [] }) { waiter.resume() }
        }

        func wait() async {
            await withCheckedContinuation { continuation in
                let isOpen = waiters.withLock { waiters in
                    waiters?.append(continuation)
                    return waiters == nil
                }
                if isOpen { continuation.resume() }
            }
        }
    }

    /// A request as the origin saw it.
    package struct Seen: Sendable {
        package var method: String
        package var path: String
        package var range: String?
        package var ifRange: String?
        package var ifNoneMatch: String? { headers["if-none-match"] }
        /// Header values by lower-case name.
        package var headers: [String: String]
        /// A POST's body.
        package var body: String?
        /// When the request arrived.
        package var date = Date()
        /// Whether it came over HTTP/2 (a stream of a multiplexed connection).
        package var http2 = false
        /// Which connection it came on (unique among the connections open at once).
        package var connection: ObjectIdentifier?
        /// The `Authorization` it carried.
        package var authorization: String? { headers["authorization"] }
        /// The `Host` it named (HTTPTypes keeps it as the request's authority).
        package var host: String?
    }

    /// The request context: BasicRequestContext's, the connection, and whether it is HTTP/2.
    struct Context: RequestContext {
        var coreContext: CoreRequestContextStorage
        let http2: Bool
        let connection: ObjectIdentifier

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            // An accepted connection's parent is the listening channel; an HTTP/2 stream's is
            // its connection.
            http2 = source.channel.parent?.parent != nil
            connection = ObjectIdentifier(http2 ? source.channel.parent! : source.channel)
        }
    }

    private struct State {
        var files: [String: File] = [:]
        var faults: [String: [Fault]] = [:]
        var redirects: [String: (status: Int, location: String)] = [:]
        var requests: [Seen] = []
        var bytesSent: [String: Int] = [:]
        /// Body bytes sent in answer to each of `requests`.
        var sentByRequest: [Int] = []
        var active = 0
        var peakActive = 0
        /// The gates of `holdAfter` faults, opened when ``run(tls:http2:_:)``'s body ends.
        var gates: [Gate] = []
        /// Paths that answer 401 without this `Authorization` value.
        var protected: [String: String] = [:]
        /// `Set-Cookie` values added to every answer for a path (redirects too).
        var setCookies: [String: [String]] = [:]
        /// Paths that answer 403 unless the request's `Cookie` header holds this `name=value`.
        var cookieRequired: [String: String] = [:]
        /// Paths that ask for Basic or Digest (``OriginLogin``).
        var logins: [String: OriginLogin] = [:]
        /// Digest nonces handed out: true while accepted, false once stale.
        var nonces: [String: Bool] = [:]
        var challenged: [String: Int] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    // MARK: Scripting

    package func serve(_ path: String, _ file: File) {
        state.withLock { $0.files[path] = file }
    }

    /// Changes a served file (e.g. a new version with a new ETag).
    package func update(_ path: String, _ change: (inout File) -> Void) {
        state.withLock { state in
            if var file = state.files[path] {
                change(&file)
                state.files[path] = file
            }
        }
    }

    /// Faults for the next requests of `path`, one per request, in order.
    package func script(_ path: String, _ faults: [Fault]) {
        state.withLock { state in
            state.faults[path, default: []].append(contentsOf: faults)
            for case .holdAfter(_, let gate) in faults { state.gates.append(gate) }
        }
    }

    /// Answers `path` only with HTTP Basic credentials `user` / `password` (else 401).
    package func protect(_ path: String, user: String, password: String) {
        let credentials = Data("\(user):\(password)".utf8).base64EncodedString()
        state.withLock { $0.protected[path] = "Basic \(credentials)" }
    }

    /// Answers for `path` (files, redirects, refusals) carry these `Set-Cookie` values.
    package func setCookies(_ path: String, _ values: [String]) {
        state.withLock { $0.setCookies[path] = values }
    }

    /// Answers `path` with 403 unless the request sends the cookie `pair` (`name=value`).
    package func requireCookie(_ path: String, _ pair: String) {
        state.withLock { $0.cookieRequired[path] = pair }
    }

    /// Answers `path` only to a login (Basic, Digest MD5 or SHA-256: one challenge per scheme
    /// given, in that order), else 401.
    package func protect(_ path: String, _ login: OriginLogin) {
        state.withLock { $0.logins[path] = login }
    }

    /// Makes every Digest nonce handed out so far stale: the next answer with one gets a 401
    /// with `stale=true` and a new nonce.
    package func expireNonces() {
        state.withLock { state in for key in state.nonces.keys { state.nonces[key] = false } }
    }

    /// How many 401s the origin answered for `path`.
    package func challenges(for path: String) -> Int { state.withLock { $0.challenged[path] ?? 0 } }

    package func redirect(_ path: String, to location: String, status: Int = 302) {
        state.withLock { $0.redirects[path] = (status, location) }
    }

    // MARK: Observing

    package var requests: [Seen] { state.withLock { $0.requests } }
    package func requests(for path: String) -> [Seen] { requests.filter { $0.path == path } }
    /// Body bytes sent for `path`, over all requests.
    package func bytesSent(_ path: String) -> Int { state.withLock { $0.bytesSent[path] ?? 0 } }
    /// Body bytes sent for `path`, request by request, in the order of `requests(for:)`. Unlike
    /// the running total, a request's count cannot include bytes an earlier response was still
    /// writing into the socket when the client hung up.
    package func bytesSentPerRequest(_ path: String) -> [Int] {
        state.withLock { state in
            zip(state.requests, state.sentByRequest).filter { $0.0.path == path }.map(\.1)
        }
    }
    /// The most requests in flight at once.
    package var peakConcurrency: Int { state.withLock { $0.peakActive } }

    // MARK: Serving

    func respond(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let body = request.method == .post ? String(buffer: try await request.collectBody(upTo: 1 << 20)) : nil
        var response = try await answer(request, body: body, context: context)
        for value in state.withLock({ $0.setCookies[request.uri.path] ?? [] }) {
            response.headers.append(HTTPField(name: .setCookie, value: value))
        }
        return response
    }

    private func answer(_ request: Request, body: String?, context: Context) async throws -> Response {
        let path = request.uri.path
        let seen = Seen(
            method: request.method.rawValue, path: path, range: request.headers[.range],
            ifRange: request.headers[.ifRange],
            headers: Dictionary(request.headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { a, _ in a }),
            body: body, http2: context.http2, connection: context.connection, host: request.head.authority
        )
        if let pair = state.withLock({ $0.cookieRequired[path] }),
            !(request.headers[.cookie] ?? "").split(separator: ";").contains(where: { $0.trimmingCharacters(in: .whitespaces) == pair })
        {
            state.withLock { state in
                state.requests.append(seen)
                state.sentByRequest.append(0)
            }
            return Response(status: .forbidden, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<h1>log in first</h1>")))
        }
        if let login = state.withLock({ $0.logins[path] }) {
            var target = request.uri.path
            if let query = request.uri.query { target += "?" + query }
            let verdict = state.withLock { state in
                login.check(request.headers[.authorization], method: request.method.rawValue, target: target) { state.nonces[$0] }
            }
            if verdict != .accepted {
                let nonce = Data((0..<18).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
                state.withLock { state in
                    state.requests.append(seen)
                    state.sentByRequest.append(0)
                    state.nonces[nonce] = true
                    state.challenged[path, default: 0] += 1
                }
                var headers: HTTPFields = [.contentType: "text/html"]
                for challenge in login.challenges(nonce: nonce, stale: verdict == .stale) {
                    headers.append(HTTPField(name: .wwwAuthenticate, value: challenge))
                }
                return Response(status: .unauthorized, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "<h1>who are you?</h1>")))
            }
        }
        let required = state.withLock { $0.protected[path] }
        if let required, request.headers[.authorization] != required {
            state.withLock { state in
                state.requests.append(seen)
                state.sentByRequest.append(0)
            }
            return Response(
                status: .unauthorized, headers: [.wwwAuthenticate: "Basic realm=\"test\"", .contentType: "text/html"],
                body: .init(byteBuffer: ByteBuffer(string: "<h1>login</h1>"))
            )
        }
        let (file, fault, redirect, index) = state.withLock { state in
            let index = state.requests.count
            state.requests.append(seen)
            state.sentByRequest.append(0)
            var fault: Fault?
            if var queue = state.faults[path], !queue.isEmpty {
                fault = queue.removeFirst()
                state.faults[path] = queue
            }
            return (state.files[path], fault, state.redirects[path], index)
        }
        if let redirect {
            return Response(status: .init(code: redirect.status), headers: [.location: redirect.location])
        }
        if case .status(let code, let retryAfter) = fault {
            var headers: HTTPFields = [.contentType: "text/html"]
            if let retryAfter { headers[.retryAfter] = retryAfter }
            return Response(status: .init(code: code), headers: headers, body: .init(byteBuffer: ByteBuffer(string: "<h1>error \(code)</h1>")))
        }
        guard let file else {
            return Response(status: .notFound, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<h1>not found</h1>")))
        }

        var headers: HTTPFields = [:]
        // Conditional GET, as feeds are fetched.
        if let etag = file.etag, request.headers[.ifNoneMatch] == etag {
            return Response(status: .notModified, headers: [.eTag: etag])
        }
        if let etag = file.etag { headers[.eTag] = etag }
        if let lastModified = file.lastModified { headers[.lastModified] = lastModified }
        if let type = file.contentType { headers[.contentType] = type }
        if let disposition = file.contentDisposition { headers[.contentDisposition] = disposition }
        for (name, value) in file.extraHeaders { headers[HTTPField.Name(name)!] = value }
        if file.honorsRanges { headers[.acceptRanges] = "bytes" }

        let size = file.data.count
        var start = 0
        var status = HTTPResponse.Status.ok
        var last = size - 1
        if file.honorsRanges, let range = seen.range, let offset = Self.rangeStart(range),
            seen.ifRange == nil || seen.ifRange == file.etag || seen.ifRange == file.lastModified
        {
            if case .ignoreRange = fault {} else {
            if offset >= size {
                headers[.contentRange] = "bytes */\(size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            start = offset
            if case .wrongRangeStart = fault { start = max(0, offset - 1) }
            last = min(Self.rangeEnd(range) ?? last, last)
            status = .partialContent
            headers[.contentRange] = "bytes \(start)-\(last)/\(size)"
            }
        }
        let body = file.data[start...last]
        var announced = body.count
        if case .contentLengthExtra(let extra) = fault { announced += extra }
        let responseBody = ResponseBody(contentLength: announced) { writer in
            try await self.write(body, path: path, request: index, file: file, fault: fault, to: &writer)
        }
        return Response(status: status, headers: headers, body: responseBody)
    }

    private func write(_ body: Data, path: String, request: Int, file: File, fault: Fault?, to writer: inout any ResponseBodyWriter) async throws {
        state.withLock { state in
            state.active += 1
            state.peakActive = max(state.peakActive, state.active)
        }
        defer { state.withLock { $0.active -= 1 } }
        let chunk = 16 * 1024
        var sent = 0
        var index = body.startIndex
        while index < body.endIndex {
            var end = body.index(index, offsetBy: chunk, limitedBy: body.endIndex) ?? body.endIndex
            // What a fault does once this piece is sent (instead of the throttle's pause).
            var then: (@Sendable () async throws -> Void)?
            switch fault {
            case .dropAfter(let limit) where sent + (end - index) >= limit:
                end = index + (limit - sent)
                then = { throw TestFailure("origin dropped the connection on purpose") }
            case .stallAfter(let limit, let duration) where sent < limit && sent + (end - index) >= limit:
                then = { try await Task.sleep(for: duration) }
            case .holdAfter(let limit, let gate) where sent < limit && sent + (end - index) >= limit:
                end = index + (limit - sent)
                then = { await gate.wait() }
            default:
                break
            }
            try await writer.write(ByteBuffer(bytes: body[index..<end]))
            count(end - index, path, request)
            sent += end - index
            index = end
            if let then {
                try await then()
            } else if let rate = file.bytesPerSecond {
                try await Task.sleep(for: .seconds(Double(chunk) / Double(rate)))
            }
        }
        if case .contentLengthExtra = fault { throw TestFailure("origin closes short of its Content-Length on purpose") }
        try await writer.finish(nil)
    }

    private func count(_ bytes: Int, _ path: String, _ request: Int) {
        state.withLock {
            $0.bytesSent[path, default: 0] += bytes
            $0.sentByRequest[request] += bytes
        }
    }

    /// `bytes=100-` or `bytes=100-199` → 100.
    /// The last byte of `bytes=a-b`, nil for `bytes=a-`.
    package static func rangeEnd(_ header: String) -> Int? {
        guard header.hasPrefix("bytes="), let dash = header.firstIndex(of: "-") else { return nil }
        return Int(header[header.index(after: dash)...])
    }

    package static func rangeStart(_ header: String) -> Int? {
        guard header.hasPrefix("bytes="), let dash = header.firstIndex(of: "-") else { return nil }
        return Int(header[header.index(header.startIndex, offsetBy: 6)..<dash])
    }

    package static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// Deterministic pseudo-random bytes (so files differ and hashes mean something).
    package static func bytes(_ count: Int, seed: UInt64 = 1) -> Data {
        var generator = SplitMix64(seed: seed)
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            var i = 0
            while i < count {
                var value = generator.next()
                let n = min(8, count - i)
                withUnsafeBytes(of: &value) { raw.baseAddress!.advanced(by: i).copyMemory(from: $0.baseAddress!, byteCount: n) }
                i += n
            }
        }
        return data
    }

    // MARK: Running

    /// Runs a fresh origin on 127.0.0.1 (port 0) for the duration of `body`.
    /// - Parameters:
    ///   - tls: serve https with the test certificate (see ``Origin/trustingClientTLS``).
    ///   - http2: serve https offering HTTP/2 (ALPN `h2`, and HTTP/1.1 for clients without it).
    ///   - certificate: serve https with this chain and key (PEM files) instead of the test certificate.
    ///   - address: the loopback address to listen on (127.0.0.2: another host for the client).
    package static func run<T: Sendable>(
        tls: Bool = false, http2: Bool = false, certificate: (chain: URL, key: URL)? = nil, address: String = "127.0.0.1",
        _ body: (Origin, URL) async throws -> T
    ) async throws -> T {
        let origin = Origin()
        let router = Router(context: Context.self)
        router.get("**") { request, context in try await origin.respond(request, context: context) }
        router.post("**") { request, context in try await origin.respond(request, context: context) }
        let tls = tls || http2 || certificate != nil
        // Only a TLS origin reads certificates (most tests start a plain one, hundreds at once).
        let serverTLS = try tls ? certificate.map { try Self.serverTLS(chain: $0.chain, key: $0.key) } ?? Self.serverTLS() : nil
        let port = Mutex<Int?>(nil)
        let logger = testLogger("origin")
        let onRunning: @Sendable (any Channel) async -> Void = { channel in port.withLock { $0 = channel.localAddress?.port } }
        let service: any Service
        if http2 {
            service = Application(
                router: router, server: try .http2Upgrade(tlsConfiguration: serverTLS!),
                configuration: .init(address: .hostname(address, port: 0)), onServerRunning: onRunning, logger: logger
            )
        } else if tls {
            service = Application(
                router: router, server: try .tls(.http1(), tlsConfiguration: serverTLS!),
                configuration: .init(address: .hostname(address, port: 0)), onServerRunning: onRunning, logger: logger
            )
        } else {
            service = Application(
                router: router, configuration: .init(address: .hostname(address, port: 0)), onServerRunning: onRunning,
                logger: logger
            )
        }
        let group = ServiceGroup(services: [service], logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            defer { tasks.cancelAll() }
            try await eventually("the origin to listen") { port.withLock { $0 } != nil }
            let base = URL(string: "\(tls ? "https" : "http")://\(address):\(port.withLock { $0 }!)")!
            // A response still held would keep the server from stopping, whatever the test did or threw.
            defer { for gate in origin.state.withLock({ $0.gates }) { gate.open() } }
            let result = try await body(origin, base)
            await group.triggerGracefulShutdown()
            return result
        }
    }

    package static func certificatesFolder() -> URL {
        Bundle.module.resourceURL!.appendingPathComponent("Certificates")
    }

    static func serverTLS(chain: URL, key: URL) throws -> TLSConfiguration {
        let certificates = try NIOSSLCertificate.fromPEMFile(chain.path)
        let privateKey = try NIOSSLPrivateKey(file: key.path, format: .pem)
        return TLSConfiguration.makeServerConfiguration(certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(privateKey))
    }

    static func serverTLS() throws -> TLSConfiguration {
        let folder = certificatesFolder()
        let certificate = try NIOSSLCertificate.fromPEMFile(folder.appendingPathComponent("localhost.crt").path)
        let key = try NIOSSLPrivateKey(file: folder.appendingPathComponent("localhost.key").path, format: .pem)
        return TLSConfiguration.makeServerConfiguration(certificateChain: certificate.map { .certificate($0) }, privateKey: .privateKey(key))
    }

    /// Client TLS settings that trust the test certificate.
    package static func trustingClientTLS() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        let certificates = try NIOSSLCertificate.fromPEMFile(certificatesFolder().appendingPathComponent("localhost.crt").path)
        configuration.trustRoots = .certificates(certificates)
        return configuration
    }
}

/// A small seeded generator (SplitMix64).
package struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
