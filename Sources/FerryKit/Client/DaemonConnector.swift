import AsyncHTTPClient
import Foundation
import NIOCore

/// Finds the local daemon through `daemon.json` and the token file, starting it when it is not
/// running (if a ``DaemonLauncher`` is given), and opens event streams that reconnect by
/// themselves, resuming with `Last-Event-ID`.
public struct DaemonConnector: Sendable {
    /// Where `daemon.json` and the token are found.
    public var paths: FerryPaths
    /// How to start a daemon when none answers; nil to never start one.
    public var launcher: DaemonLauncher?
    /// The client that the returned ``DaemonClient``s use.
    public var httpClient: HTTPClient

    /// A connector.
    /// - Parameters:
    ///   - paths: the folders to find the daemon in; by default `FERRY_HOME`, else XDG.
    ///   - launcher: how to start a daemon when none answers; nil to never start one.
    ///   - httpClient: the client for every request to the daemon.
    public init(paths: FerryPaths = .resolve(), launcher: DaemonLauncher? = nil, httpClient: HTTPClient = .shared) {
        self.paths = paths
        self.launcher = launcher
        self.httpClient = httpClient
    }

    /// A client for the running daemon, starting one first if needed and allowed.
    public func connect() async throws -> DaemonClient {
        if let client = await running() { return client }
        if let client = await activated() { return client }
        guard let launcher else {
            throw FerryError(.daemonUnreachable, "The Ferry daemon is not running; start it with `ferry serve --detach`.")
        }
        try await launcher.launch()
        // `serve --detach` returns once its daemon answers, or another one won the race.
        for _ in 0..<50 {
            if let client = await running() { return client }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw FerryError(
            .daemonStartFailed, "The Ferry daemon was started but does not answer; see \(paths.daemonLog.path)."
        )
    }

    /// The daemon that `daemon.json` names, if it answers with our token.
    public func running() async -> DaemonClient? {
        guard let data = FileManager.default.contents(atPath: paths.daemonInfo.path),
            let info = try? FerryJSON.decoder().decode(DaemonInfo.self, from: data),
            let token = try? DaemonToken.read(paths),
            ChildProcess.isAlive(info.pid)
        else { return nil }
        let client = DaemonClient(baseURL: info.url, token: token, httpClient: httpClient)
        // A daemon that is gone refuses at once; a live one on a loaded machine may take seconds.
        guard (try? await client.status(timeout: .seconds(10))) != nil else { return nil }
        return client
    }

    /// The daemon systemd starts on demand (``ServiceAddress``), if one is installed: the first
    /// connection starts it, and it answers once it has taken over the socket (the token may only
    /// exist by then, on its very first start). Nil at once when nothing listens there.
    public func activated() async -> DaemonClient? {
        guard let url = ServiceAddress.read(paths: paths) else { return nil }
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let token = try? DaemonToken.read(paths)
            let client = DaemonClient(baseURL: url, token: token ?? "", httpClient: httpClient)
            do {
                _ = try await client.status(timeout: .seconds(5))
                return client
            } catch let error as FerryError where error.code == .unauthorized {
                // Our daemon's first start writes the token after it answers: read it again.
                // With a token that is refused, someone else answers there.
                if token != nil, token == (try? DaemonToken.read(paths)) { return nil }
            } catch {
                if !(await Self.listens(url)) { return nil }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// True when something accepts connections at `url`'s host and port.
    static func listens(_ url: String) async -> Bool {
        guard let components = URLComponents(string: url), let host = components.host, let port = components.port else { return false }
        return TCPProbe.accepts(host: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port)
    }

    /// What an event stream delivers.
    public enum StreamItem: Sendable {
        /// The stream is (re)connected; replayed and live events follow.
        case connected
        /// An event: journaled (with a `seq`) or live progress.
        case event(TransferEvent)
        /// The connection dropped; the stream is reconnecting.
        case disconnected(FerryError)
    }

    /// The session's events after `after` (nil: after its last acknowledged event), for as long
    /// as the consumer iterates. On a dropped connection or a daemon restart it reconnects
    /// (starting the daemon if allowed) and continues after the last event it delivered, so no
    /// journaled event is lost or repeated.
    public func events(session: String, after: Int64?) -> AsyncStream<StreamItem> {
        AsyncStream(bufferingPolicy: .bufferingNewest(10_000)) { continuation in
            let task = Task {
                var last = after
                var delay = Duration.milliseconds(100)
                while !Task.isCancelled {
                    do {
                        let client = try await connect()
                        let response = try await client.openEventStream(session: session, after: last)
                        continuation.yield(.connected)
                        delay = .milliseconds(100)
                        var decoder = EventStreamDecoder()
                        for try await chunk in response.body {
                            for event in decoder.events(in: chunk) {
                                if let seq = event.seq { last = seq }
                                continuation.yield(.event(event))
                            }
                        }
                        continuation.yield(.disconnected(FerryError(.daemonUnreachable, "The daemon closed the event stream.")))
                    } catch {
                        if Task.isCancelled { break }
                        let failure = error as? FerryError ?? FerryError(.daemonUnreachable, "\(error)")
                        if [.invalidRequest, .unauthorized].contains(failure.code) {
                            continuation.yield(.disconnected(failure))
                            break
                        }
                        continuation.yield(.disconnected(failure))
                    }
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .seconds(2))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
