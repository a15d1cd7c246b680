import AsyncHTTPClient
import FerryCore
import FerryKit
import FerryListening
import FerryServer
import Foundation
import Logging
import NIOSSL
import ServiceLifecycle

/// A logger that is silent unless `FERRY_TEST_LOG` is set (to a level such as `debug`).
package func testLogger(_ label: String) -> Logger {
    guard let level = ProcessInfo.processInfo.environment["FERRY_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) else {
        return Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() })
    }
    var logger = Logger(label: label)
    logger.logLevel = level
    return logger
}

/// A temporary folder, deleted when `body` ends.
package func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-test-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}

/// An HTTP client as the daemon makes it, optionally trusting the test certificate (or the CA
/// in the PEM file `trusting`, alone) and with short timeouts for fault tests.
package func makeTestHTTPClient(readTimeout: Duration = .seconds(30), trustTestCertificate: Bool = false, trusting caFile: String? = nil) throws -> HTTPClient {
    var configuration = TransferEngine.httpClientConfiguration(connectTimeout: .seconds(5), readTimeout: readTimeout)
    if trustTestCertificate { configuration.tlsConfiguration = try Origin.trustingClientTLS() }
    if let caFile {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
        configuration.tlsConfiguration = tls
    }
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}

/// Runs `body` with a test HTTP client that is shut down afterwards, even when `body` throws
/// (a client dropped without shutdown traps, which would take every other test down with it).
package func withTestHTTPClient<T>(
    readTimeout: Duration = .seconds(30), trustTestCertificate: Bool = false, trusting caFile: String? = nil, _ body: (HTTPClient) async throws -> T
) async throws -> T {
    let client = try makeTestHTTPClient(readTimeout: readTimeout, trustTestCertificate: trustTestCertificate, trusting: caFile)
    do {
        let result = try await body(client)
        try await client.shutdown()
        return result
    } catch {
        try? await client.shutdown()
        throw error
    }
}

/// A transfer engine running (as a service) on a real SQLite journal in `home`, for the
/// duration of `body`; then shut down gracefully.
package struct EngineHarness: Sendable {
    package let engine: TransferEngine
    package let home: URL
    package var library: LibraryFolder { engine.library }
    package var journal: SQLiteJournal { engine.local }

    package static func run<T: Sendable>(
        home: URL, configuration: TransferEngine.Configuration = .fast, clock: any Clock<Duration> = ContinuousClock(),
        httpClient: HTTPClient? = nil, _ body: (EngineHarness) async throws -> T
    ) async throws -> T {
        let client = try httpClient ?? makeTestHTTPClient()
        do {
            let result = try await run(home: home, configuration: configuration, clock: clock, client: client, body)
            if httpClient == nil { try await client.shutdown() }
            return result
        } catch {
            if httpClient == nil { try? await client.shutdown() }
            throw error
        }
    }

    private static func run<T: Sendable>(
        home: URL, configuration: TransferEngine.Configuration, clock: any Clock<Duration>, client: HTTPClient,
        _ body: (EngineHarness) async throws -> T
    ) async throws -> T {
        // The daemon's tables: listening libraries and the aria2 RPC run on harnessed engines too.
        let journal = try SQLiteJournal.open(
            at: home.appendingPathComponent("state/journal.sqlite"), tables: [.listening, .aria2], now: configuration.now
        )
        let engine = TransferEngine(
            configuration: configuration, journal: journal, library: LibraryFolder(root: home.appendingPathComponent("library")),
            httpClient: client, clock: clock, random: { 0.5 }, logger: testLogger("engine")
        )
        let group = ServiceGroup(services: [engine], logger: testLogger("services"))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let harness = EngineHarness(engine: engine, home: home)
            do {
                let result = try await body(harness)
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }

    /// Starts downloads of `urls` in session `session`.
    package func get(_ urls: [URL], session: String = "test", force: Bool = false) async throws -> [Transfer] {
        try await engine.enqueue(.init(urls: urls, session: session, force: force))
    }

    /// - Parameter connections: the transfer's ``TransferOptions/connections`` (1: one stream,
    ///   for tests of what a single connection does).
    package func get(_ url: URL, session: String = "test", connections: Int? = nil) async throws -> Transfer {
        try await engine.enqueue(.init(urls: [url], session: session, options: connections.map { TransferOptions(connections: $0) }))[0]
    }

    /// Waits until the transfer reaches `state` (failing fast if it ends in another final one).
    @discardableResult
    package func wait(_ id: Int64, for state: TransferState, timeout: Duration = .seconds(60)) async throws -> Transfer {
        var last: Transfer?
        try await eventually("transfer \(id) to be \(state) (is \(last?.state.rawValue ?? "?"), error \(last?.error?.message ?? "none"))", timeout: timeout) {
            last = try await engine.transfer(id)
            if let last, last.state.isFinal, last.state != state {
                throw TestFailure("transfer \(id) ended \(last.state.rawValue) (\(last.error?.message ?? "")) instead of \(state)")
            }
            return last?.state == state
        }
        return last!
    }

    /// Waits until no worker or timer holds the transfer (after a pause: checkpointed, file closed).
    package func waitUntilReleased(_ id: Int64) async throws {
        try await eventually("transfer \(id) to be released") { await !engine.isHeld(id) }
    }

    /// Waits until at least `bytes` are received.
    package func wait(_ id: Int64, bytes: Int64, timeout: Duration = .seconds(30)) async throws {
        try await eventually("transfer \(id) to receive \(bytes) bytes", timeout: timeout) {
            try await engine.transfer(id).bytesReceived >= bytes
        }
    }

    /// The journaled events of a session, oldest first.
    package func events(session: String = "test") async throws -> [TransferEvent] {
        try await journal.events(session: session, after: 0, limit: 100_000)
    }

    package func partFileExists(_ id: Int64) -> Bool {
        FileManager.default.fileExists(atPath: library.partURL(for: id).path)
    }

    /// Every regular file under `home`, relative paths.
    package func allFiles() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: home.path)
        var files: [String] = []
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: home.appendingPathComponent(path).path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(path)
            }
        }
        return files.sorted()
    }
}

extension TransferEngine.Configuration {
    /// Small checkpoints and quick retries, for tests.
    package static var fast: TransferEngine.Configuration {
        var configuration = TransferEngine.Configuration()
        configuration.checkpointBytes = 64 * 1024
        configuration.checkpointInterval = .milliseconds(20)
        configuration.retry = RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(20), maxDelay: .milliseconds(100))
        configuration.progressInterval = .milliseconds(50)
        return configuration
    }
}

extension Data {
    package var sha256Hex: String { Origin.sha256(self) }
}
