import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// A stand-in for Apple's iTunes Search API on loopback: it answers `/search` and `/lookup`
/// with the real recorded responses in Tests/Fixtures (or inline bodies), misbehaves on
/// cue (statuses, stalls, silence), and records every request with its query decoded the way
/// a form-reading server like Apple's decodes it (`+` is a space), so tests see exactly what a
/// term turned into.
package final class CatalogServer: Sendable {
    /// What to answer.
    package enum Reply: Sendable {
        /// 200 with a recorded response from `Tests/Fixtures/itunes/`, labelled as
        /// Apple labels it.
        case fixture(String)
        /// Any status, content type and body.
        case body(String, status: Int = 200, contentType: String = CatalogServer.appleContentType)
        /// 200 at once, then only blank lines (which JSON allows before a value) every 20 ms
        /// until `duration` passes or ``releaseStalls()``, then the fixture (or an empty
        /// result): a server that is slow but still there. A client that walks away is counted
        /// in ``abandoned``.
        case stall(Duration, then: String? = nil)
        /// No answer at all, not even a status line, for `duration`; then an empty result.
        case hang(Duration)
    }

    /// A request as the server saw it.
    package struct Seen: Sendable {
        package struct Item: Sendable, Hashable {
            package var name: String
            package var value: String
            package init(_ name: String, _ value: String) {
                self.name = name
                self.value = value
            }
        }

        package var path: String
        /// The query exactly as it arrived, still percent-encoded.
        package var rawQuery: String
        /// The query decoded, in order.
        package var items: [Item]
        package var headers: [String: String]

        /// The first decoded value of `name`.
        package subscript(name: String) -> String? { items.first { $0.name == name }?.value }
    }

    package static let appleContentType = "text/javascript; charset=utf-8"
    package static let emptyResult = #"{"resultCount":0,"results":[]}"#

    private struct Rule {
        var path: String
        var conditions: [String: String]
        var reply: Reply
    }

    private struct State {
        var rules: [Rule] = []
        var scripted: [String: [Reply]] = [:]
        var requests: [Seen] = []
        var stalling = 0
        var abandoned = 0
        var releases = 0
    }

    private let state = Mutex(State())

    package init() {}

    // MARK: Scripting

    /// Answers requests for `path` whose decoded query contains every name and value of
    /// `conditions` with `reply`. The first matching rule wins, like a router's: add specific
    /// rules before general ones.
    package func answer(_ path: String, where conditions: [String: String] = [:], with reply: Reply) {
        state.withLock { $0.rules.append(Rule(path: path, conditions: conditions, reply: reply)) }
    }

    /// Replies for the next requests of `path`, one per request, in order, before any rule.
    package func script(_ path: String, _ replies: [Reply]) {
        state.withLock { $0.scripted[path, default: []].append(contentsOf: replies) }
    }

    /// Ends every stall now in progress (each then sends its body).
    package func releaseStalls() {
        state.withLock { $0.releases += 1 }
    }

    // MARK: Observing

    package var requests: [Seen] { state.withLock { $0.requests } }
    package func requests(for path: String) -> [Seen] { requests.filter { $0.path == path } }
    /// Stalled responses still being sent.
    package var stalling: Int { state.withLock { $0.stalling } }
    /// Stalled responses whose client went away before the end.
    package var abandoned: Int { state.withLock { $0.abandoned } }

    // MARK: Fixtures

    /// `Tests/Fixtures/itunes/`: Apple's recorded answers (see `Tests/Fixtures/README.md`).
    package static var fixturesFolder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/itunes")
    }

    package static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixturesFolder.appendingPathComponent(name))
    }

    // MARK: Serving

    func respond(_ request: Request) async throws -> Response {
        let path = request.uri.path
        let rawQuery = request.uri.query ?? ""
        let seen = Seen(
            path: path, rawQuery: rawQuery, items: Self.decodeQuery(rawQuery),
            headers: Dictionary(request.headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { a, _ in a })
        )
        let reply = state.withLock { state -> Reply? in
            state.requests.append(seen)
            if var queue = state.scripted[path], !queue.isEmpty {
                let reply = queue.removeFirst()
                state.scripted[path] = queue
                return reply
            }
            return state.rules.first { rule in
                rule.path == path && rule.conditions.allSatisfy { condition in seen[condition.key] == condition.value }
            }?.reply
        }
        switch reply {
        case nil:
            return Self.response(#"{"errorMessage":"no rule for this request in CatalogServer"}"#, status: 404, contentType: "application/json")
        case .fixture(let name):
            return Self.response(String(decoding: try Self.fixture(name), as: UTF8.self), status: 200, contentType: Self.appleContentType)
        case .body(let body, let status, let contentType):
            return Self.response(body, status: status, contentType: contentType)
        case .hang(let duration):
            try await Task.sleep(for: duration)
            return Self.response(Self.emptyResult, status: 200, contentType: Self.appleContentType)
        case .stall(let duration, let fixture):
            let body = try fixture.map { String(decoding: try Self.fixture($0), as: UTF8.self) } ?? Self.emptyResult
            return Response(
                status: .ok, headers: [.contentType: Self.appleContentType],
                body: ResponseBody { writer in try await self.stall(for: duration, then: body, to: &writer) }
            )
        }
    }

    private func stall(for duration: Duration, then body: String, to writer: inout any ResponseBodyWriter) async throws {
        let releases = state.withLock { state in
            state.stalling += 1
            return state.releases
        }
        defer { state.withLock { $0.stalling -= 1 } }
        let end = ContinuousClock.now + duration
        // Only a failed write counts as abandoned: the server's own shutdown ends the sleep.
        do {
            while ContinuousClock.now < end, state.withLock({ $0.releases }) == releases {
                try await Self.write("\n", to: &writer)
                try await Task.sleep(for: .milliseconds(20))
            }
            try await Self.write(body, to: &writer)
            try await writer.finish(nil)
        } catch let error as WriteFailure {
            state.withLock { $0.abandoned += 1 }
            throw error.underlying
        }
    }

    private struct WriteFailure: Error { var underlying: any Error }

    private static func write(_ text: String, to writer: inout any ResponseBodyWriter) async throws(WriteFailure) {
        do { try await writer.write(ByteBuffer(string: text)) } catch { throw WriteFailure(underlying: error) }
    }

    private static func response(_ body: String, status: Int, contentType: String) -> Response {
        Response(status: .init(code: status), headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// `a=1&b=x+y%26z` → [a: 1, b: "x y&z"], as `application/x-www-form-urlencoded`.
    static func decodeQuery(_ query: String) -> [Seen.Item] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return Seen.Item(decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// Runs a catalog server on 127.0.0.1 (a free port) for the duration of `body`, which gets
    /// the server and its base URL.
    package static func run<T: Sendable>(_ body: (CatalogServer, URL) async throws -> T) async throws -> T {
        let server = CatalogServer()
        let router = Router()
        router.get("**") { request, _ in try await server.respond(request) }
        let port = Mutex<Int?>(nil)
        let logger = testLogger("catalog-server")
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.withLock { $0 = channel.localAddress?.port } }, logger: logger
        )
        let group = ServiceGroup(services: [application], logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            defer { tasks.cancelAll() }
            try await eventually("the catalog server to listen") { port.withLock { $0 } != nil }
            let base = URL(string: "http://127.0.0.1:\(port.withLock { $0 }!)")!
            let result = try await body(server, base)
            await group.triggerGracefulShutdown()
            return result
        }
    }
}
