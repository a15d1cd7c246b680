import AsyncHTTPClient
import FerryCore
import FerryKit
import FerryServer
import Foundation
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Synchronization

/// The whole daemon (engine and HTTP API) in-process on a free loopback port, with a temporary
/// FERRY_HOME, for the duration of `body`.
package struct DaemonHarness: Sendable {
    package let daemon: FerryDaemon
    /// A FerryKit client with the daemon's token.
    package let client: DaemonClient
    package let baseURL: String
    package let port: Int
    package let paths: FerryPaths
    /// What `POST /v1/shutdown` and `/v1/restart` asked for (the harness stops nothing itself).
    package let stops: Stops
    let http: HTTPClient

    package final class Stops: Sendable {
        private let asked = Mutex<[DaemonStop]>([])
        package var all: [DaemonStop] { asked.withLock { $0 } }
        func append(_ stop: DaemonStop) { asked.withLock { $0.append(stop) } }
    }

    package static func run<T: Sendable>(
        home: URL, engine: TransferEngine.Configuration = .fast, catalogBaseURL: URL? = nil,
        configure: (inout DaemonConfiguration) -> Void = { _ in },
        _ body: @Sendable (DaemonHarness) async throws -> T
    ) async throws -> T {
        let paths = FerryPaths(library: home.appendingPathComponent("library"), state: home.appendingPathComponent("state"))
        var configuration = DaemonConfiguration(paths: paths)
        configuration.port = 0
        configuration.engine = engine
        // Never Apple's real catalog from a test: an unreachable port unless one is given.
        configuration.catalogBaseURL = catalogBaseURL ?? URL(string: "http://127.0.0.1:9")!
        // Never the developer's own desktop: a test that wants notifications gives its bus.
        configuration.desktopBus = nil
        configure(&configuration)
        let http = try makeTestHTTPClient()
        let stops = Stops()
        do {
            let daemon = try buildDaemon(configuration, httpClient: http, logger: testLogger("daemon"), requestShutdown: { stop in
                stops.append(stop)
            })
            let result = try await daemon.application.test(.live) { testClient in
                let port = testClient.port!
                let baseURL = "http://127.0.0.1:\(port)"
                let harness = DaemonHarness(
                    daemon: daemon, client: DaemonClient(baseURL: baseURL, token: daemon.token, httpClient: http),
                    baseURL: baseURL, port: port, paths: paths, stops: stops, http: http
                )
                return try await body(harness)
            }
            try await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    /// A web app login: the session cookie a one-time link sets (`Cookie` header value).
    package func webCookie() async throws -> String {
        let link = try await client.loginLink()
        let response = try await raw(.GET, String(link.url.dropFirst(baseURL.count)), authorized: false)
        guard let setCookie = response.headers.first(name: "Set-Cookie") else { throw TestFailure("no cookie from the login link") }
        return String(setCookie.split(separator: ";")[0])
    }

    /// A raw request, for what FerryKit would never send: no token, a foreign Host, bad JSON.
    package func raw(
        _ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], authorized: Bool = true, body: String? = nil
    ) async throws -> (status: Int, body: String, headers: HTTPHeaders) {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if authorized { request.headers.add(name: "Authorization", value: "Bearer \(daemon.token)") }
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await http.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return (Int(response.status.code), String(buffer: bytes), response.headers)
    }

    /// Reads the session's event stream (every session's when nil) until `stop` says so (or `timeout`).
    /// Checks the stream's shape on the way: each journaled event's SSE id is its seq, and one
    /// `replayed` mark ends the replay, after every replayed event and before any live one.
    package func collectEvents(
        session: String?, after: Int64?, timeout: Duration = .seconds(30), until stop: @escaping @Sendable ([TransferEvent]) -> Bool
    ) async throws -> [TransferEvent] {
        let response = try await client.openEventStream(session: session, after: after)
        return try await withThrowingTaskGroup(of: [TransferEvent]?.self) { group in
            group.addTask {
                var decoder = EventStreamDecoder()
                var events: [TransferEvent] = []
                var replayEnd: ReplayEnd?
                for try await chunk in response.body {
                    for item in decoder.feed(chunk) {
                        let event: TransferEvent
                        switch item {
                        case .unknown(let message):
                            throw TestFailure("an undecodable \(message.event) message: \(message.data)")
                        case .resync:
                            continue  // a test of retention reads the stream itself
                        case .replayed(let end):
                            guard replayEnd == nil else { throw TestFailure("a second replayed mark through \(end.through)") }
                            guard end.through == events.compactMap(\.seq).max() ?? after ?? end.through else {
                                throw TestFailure("replayed through \(end.through) after events \(events.compactMap(\.seq))")
                            }
                            replayEnd = end
                            continue
                        case .event(let decoded, let id):
                            event = decoded
                            // A journaled event's SSE id is its seq; live progress has none.
                            if let seq = event.seq, id != String(seq) {
                                throw TestFailure("SSE id \(id ?? "none") for event seq \(seq)")
                            }
                        }
                        if let replayEnd {
                            if let seq = event.seq, seq <= replayEnd.through {
                                throw TestFailure("event \(seq) after the replay through \(replayEnd.through)")
                            }
                        } else if event.seq == nil {
                            throw TestFailure("a live event before the replayed mark")
                        }
                        events.append(event)
                        if stop(events) { return events }
                    }
                }
                return events
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let events = try await group.next()! else { throw TestFailure("the event stream did not deliver in \(timeout)") }
            return events
        }
    }
}
