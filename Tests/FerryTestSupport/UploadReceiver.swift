import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization

/// A real HTTP server on loopback that receives uploads, for tests: plain `PUT`/`POST` under
/// `/plain/…`, tus 1.0 under `/tus`, and the IETF resumable-upload protocol (interop version 6,
/// as Apple's URLSession speaks it) under `/ietf`. It keeps every byte it is sent, can fail an
/// upload part-way on cue, and counts completed uploads, so a test can check that the server
/// ends with exactly the file's bytes, once.
package final class UploadReceiver: Sendable {
    /// A finished upload, as the server holds it.
    package struct Completed: Sendable {
        package var path: String
        package var method: String
        /// Request headers by lower-case name (of the request that completed it).
        package var headers: [String: String]
        /// The request body (plain), or the assembled upload (tus, IETF).
        package var body: Data
    }

    /// A resumable upload resource.
    struct Resource {
        var length: Int64
        var data = Data()
    }

    private struct State {
        var completed: [Completed] = []
        var resources: [String: Resource] = [:]
        var nextID = 1
        /// Fail the next body-carrying request after this many of its bytes (once the gate opens).
        var failAfter: (bytes: Int, gate: Origin.Gate?)?
        /// Body bytes received over all requests (for rates).
        var bytesIn = 0
        /// Every request: method and path.
        var requests: [(method: String, path: String)] = []
        /// Headers of every request, by lower-case name.
        var headers: [[String: String]] = []
        /// The gates of ``holdNextBody(after:until:)``, opened when ``run(_:)``'s body ends.
        var gates: [Origin.Gate] = []
        /// Every request must carry this login (``protect(_:)``).
        var login: OriginLogin?
        var nonces: [String: Bool] = [:]
        var challenged = 0
    }

    private let state = Mutex(State())

    package init() {}

    // MARK: Scripting and observing

    /// The next request that carries a body gets a 500 after this many bytes of it (the bytes
    /// before are kept, as a real server keeps what reached it before the connection broke).
    package func failNextBody(after bytes: Int) { state.withLock { $0.failAfter = (bytes, nil) } }

    /// The next request that carries a body stops reading after this many bytes until the test
    /// opens `gate`, then fails as ``failNextBody(after:)`` does: the server keeps exactly these
    /// bytes, so a test can act while an upload is certainly under way. The receiver opens it
    /// when the test's body ends, if the test has not.
    package func holdNextBody(after bytes: Int, until gate: Origin.Gate) {
        state.withLock { state in
            state.failAfter = (bytes, gate)
            state.gates.append(gate)
        }
    }

    /// Every request must carry `login` (Basic, or Digest computed with its own method), else
    /// it is answered 401 with the login's challenges, its body unread.
    package func protect(_ login: OriginLogin) { state.withLock { $0.login = login } }

    /// How many 401s it answered.
    package var challenges: Int { state.withLock { $0.challenged } }

    /// A 401 for a request without the login, or nil.
    func refusal(_ request: Request) -> Response? {
        guard let login = state.withLock({ $0.login }) else { return nil }
        var target = request.uri.path
        if let query = request.uri.query { target += "?" + query }
        let verdict = state.withLock { state in
            login.check(request.headers[.authorization], method: request.method.rawValue, target: target) { state.nonces[$0] }
        }
        guard verdict != .accepted else { return nil }
        _ = record(request)
        let nonce = UUID().uuidString
        state.withLock { state in
            state.nonces[nonce] = true
            state.challenged += 1
        }
        var headers: HTTPFields = [.connection: "close"]
        for challenge in login.challenges(nonce: nonce, stale: verdict == .stale) { headers.append(HTTPField(name: .wwwAuthenticate, value: challenge)) }
        return Response(status: .unauthorized, headers: headers)
    }

    struct LoginMiddleware: RouterMiddleware {
        let receiver: UploadReceiver

        func handle(_ request: Request, context: BasicRequestContext, next: (Request, BasicRequestContext) async throws -> Response) async throws -> Response {
            if let refusal = receiver.refusal(request) { return refusal }
            return try await next(request, context)
        }
    }

    package var completed: [Completed] { state.withLock { $0.completed } }
    package var bytesReceived: Int { state.withLock { $0.bytesIn } }
    package var requests: [(method: String, path: String)] { state.withLock { $0.requests } }
    package var requestHeaders: [[String: String]] { state.withLock { $0.headers } }

    // MARK: Serving

    private func record(_ request: Request) -> [String: String] {
        let headers = Dictionary(request.headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { a, _ in a })
        state.withLock {
            $0.requests.append((request.method.rawValue, request.uri.path))
            $0.headers.append(headers)
        }
        return headers
    }

    /// Reads the body, handing each chunk to `keep`; holds and fails as scripted.
    private func read(_ request: Request, keep: (ByteBuffer) -> Void) async throws {
        var seen = 0
        let failAfter = state.withLock { state in
            defer { state.failAfter = nil }
            return state.failAfter
        }
        for try await var chunk in request.body {
            if let failAfter, seen + chunk.readableBytes > failAfter.bytes {
                if let head = chunk.readSlice(length: failAfter.bytes - seen) { take(head, keep) }
                await failAfter.gate?.wait()
                throw HTTPError(.internalServerError, message: "receiver failed part-way on purpose")
            }
            seen += chunk.readableBytes
            take(chunk, keep)
        }
    }

    private func take(_ chunk: ByteBuffer, _ keep: (ByteBuffer) -> Void) {
        state.withLock { $0.bytesIn += chunk.readableBytes }
        keep(chunk)
    }

    private func plain(_ request: Request) async throws -> Response {
        let headers = record(request)
        let body = Mutex(Data())
        try await read(request) { chunk in body.withLock { $0.append(contentsOf: chunk.readableBytesView) } }
        let data = body.withLock { $0 }
        state.withLock {
            $0.completed.append(Completed(path: request.uri.path, method: request.method.rawValue, headers: headers, body: data))
        }
        return Self.json(.created, ["bytes": "\(data.count)", "sha256": Origin.sha256(data)], headers: [.location: "/files/1"])
    }

    private func create(_ request: Request, base: String) async throws -> Response {
        _ = record(request)
        guard let length = request.headers[.init("Upload-Length")!].flatMap(Int64.init) else {
            return Response(status: .badRequest)
        }
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            state.resources["\(state.nextID)"] = Resource(length: length)
            return state.nextID
        }
        var headers: HTTPFields = [.location: "\(base)/files/\(id)", .init("Upload-Offset")!: "0"]
        if base == "/tus" { headers[.init("Tus-Resumable")!] = "1.0.0" }
        return Response(status: .created, headers: headers)
    }

    private func offset(_ request: Request, context: some RequestContext, tus: Bool) throws -> Response {
        _ = record(request)
        let id = try context.parameters.require("id")
        guard let resource = state.withLock({ $0.resources[id] }) else { return Response(status: .notFound) }
        var headers: HTTPFields = [
            .init("Upload-Offset")!: "\(resource.data.count)", .init("Upload-Length")!: "\(resource.length)", .cacheControl: "no-store",
        ]
        if tus {
            headers[.init("Tus-Resumable")!] = "1.0.0"
        } else {
            headers[.init("Upload-Complete")!] = Int64(resource.data.count) == resource.length ? "?1" : "?0"
        }
        return Response(status: tus ? .ok : .noContent, headers: headers)
    }

    private func append(_ request: Request, context: some RequestContext, tus: Bool) async throws -> Response {
        let headers = record(request)
        let id = try context.parameters.require("id")
        guard let resource = state.withLock({ $0.resources[id] }) else { return Response(status: .notFound) }
        guard let offset = request.headers[.init("Upload-Offset")!].flatMap(Int.init), offset == resource.data.count else {
            return Response(status: .conflict, headers: [.init("Upload-Offset")!: "\(resource.data.count)"])
        }
        try await read(request) { chunk in
            state.withLock { $0.resources[id]?.data.append(contentsOf: chunk.readableBytesView) }
        }
        let now = state.withLock { $0.resources[id]! }
        var answer: HTTPFields = [.init("Upload-Offset")!: "\(now.data.count)"]
        guard Int64(now.data.count) == now.length else {
            return Response(status: .noContent, headers: answer)
        }
        state.withLock {
            $0.completed.append(Completed(path: request.uri.path, method: request.method.rawValue, headers: headers, body: now.data))
        }
        if tus {
            answer[.init("Tus-Resumable")!] = "1.0.0"
            return Response(status: .noContent, headers: answer)
        }
        return Self.json(.ok, ["bytes": "\(now.data.count)", "sha256": Origin.sha256(now.data)], headers: answer)
    }

    private static func json(_ status: HTTPResponse.Status, _ fields: [String: String], headers: HTTPFields) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        let text = "{" + fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\"\($0.value)\"" }.joined(separator: ",") + "}"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    // MARK: Running

    /// Runs a fresh receiver on 127.0.0.1 (port 0) for the duration of `body`.
    package static func run<T: Sendable>(_ body: (UploadReceiver, URL) async throws -> T) async throws -> T {
        let receiver = UploadReceiver()
        let router = Router()
        router.add(middleware: LoginMiddleware(receiver: receiver))
        router.put("plain/**") { request, _ in try await receiver.plain(request) }
        router.post("plain/**") { request, _ in try await receiver.plain(request) }
        router.on("plain/**", method: .options) { request, _ in
            _ = receiver.record(request)
            return Response(status: .noContent, headers: [.allow: "PUT, POST, OPTIONS"])
        }

        router.on("tus", method: .options) { request, _ in
            _ = receiver.record(request)
            return Response(
                status: .noContent,
                headers: [.init("Tus-Resumable")!: "1.0.0", .init("Tus-Version")!: "1.0.0", .init("Tus-Extension")!: "creation"]
            )
        }
        router.post("tus") { request, _ in try await receiver.create(request, base: "/tus") }
        router.head("tus/files/:id") { request, context in try receiver.offset(request, context: context, tus: true) }
        router.patch("tus/files/:id") { request, context in try await receiver.append(request, context: context, tus: true) }

        router.on("ietf", method: .options) { request, _ in
            _ = receiver.record(request)
            return Response(status: .noContent, headers: [.init("Upload-Draft-Interop-Version")!: "6", .init("Upload-Limit")!: "max-size=1000000000"])
        }
        router.post("ietf") { request, _ in try await receiver.create(request, base: "/ietf") }
        router.head("ietf/files/:id") { request, context in try receiver.offset(request, context: context, tus: false) }
        router.patch("ietf/files/:id") { request, context in try await receiver.append(request, context: context, tus: false) }

        let port = Mutex<Int?>(nil)
        let service = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.withLock { $0 = channel.localAddress?.port } }, logger: testLogger("receiver")
        )
        let group = ServiceGroup(services: [service], logger: testLogger("receiver"))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            defer { tasks.cancelAll() }
            try await eventually("the receiver to listen") { port.withLock { $0 } != nil }
            // A request still held would keep the server from stopping, whatever the test did or threw.
            defer { for gate in receiver.state.withLock({ $0.gates }) { gate.open() } }
            let result = try await body(receiver, URL(string: "http://127.0.0.1:\(port.withLock { $0 }!)")!)
            await group.triggerGracefulShutdown()
            return result
        }
    }
}
