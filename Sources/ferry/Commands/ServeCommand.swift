import ArgumentParser
import FerryCore
import FerryKit
import FerryServer
import Foundation
import Logging
import ServiceLifecycle

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Ferry daemon: the transfer engine and its API on loopback.",
        discussion: """
            Listens on 127.0.0.1:7447 unless told otherwise (FERRY_PORT and FERRY_HOST also set \
            the defaults). Writes its address to the state folder's daemon.json and requires the \
            token in the state folder's `token` file on every API call. Only one daemon runs per \
            state folder.

            SIGTERM or SIGINT stop it gracefully: running transfers are checkpointed and resume \
            when it starts again. --detach starts it in the background, logging to daemon.log.
            """
    )

    @Option(name: .long, help: "Address to listen on. Keep it on loopback: the API is for this machine only.")
    var host = ProcessInfo.processInfo.environment["FERRY_HOST"] ?? "127.0.0.1"

    @Option(name: .long, help: "Port to listen on; 0 picks a free one.")
    var port = Int(ProcessInfo.processInfo.environment["FERRY_PORT"] ?? "") ?? 7447

    @Option(name: .long, help: "Transfers that download at once; the rest wait in order.")
    var maxConcurrent = 4

    @Flag(name: .long, help: "Start in the background and return once the daemon answers.")
    var detach = false

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        guard (1...256).contains(maxConcurrent) else { throw ValidationError("--max-concurrent must be between 1 and 256.") }
    }

    func run() async throws {
        let paths = FerryPaths.resolve()
        if detach {
            try await Detach.start(
                arguments: ["serve", "--host", host, "--port", String(port), "--max-concurrent", String(maxConcurrent), "--log-level", logLevel.rawValue],
                paths: paths
            )
            return
        }
        let lock = try DaemonLock(paths: paths)
        Heap.configureForDaemon()
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "ferry")
        var configuration = DaemonConfiguration(paths: paths)
        configuration.host = host
        configuration.port = port
        configuration.engine.maxConcurrent = maxConcurrent
        configuration.catalogBaseURL = try CatalogClient.baseURL()
        let httpClient = TransferEngine.makeHTTPClient()
        let daemon = try buildDaemon(configuration, httpClient: httpClient, logger: logger) {
            // The same path as a signal: the service group shuts down gracefully.
            kill(getpid(), SIGTERM)
        }
        let group = ServiceGroup(
            configuration: .init(services: [daemon.application], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        )
        do {
            try await group.run()
        } catch {
            DaemonInfoFile.remove(paths: paths, pid: getpid())
            try? await httpClient.shutdown()
            throw FerryError(.daemonStartFailed, Self.explain(error, host: host, port: port))
        }
        DaemonInfoFile.remove(paths: paths, pid: getpid())
        try await httpClient.shutdown()
        withExtendedLifetime(lock) {}
        logger.info("stopped")
    }

    static func explain(_ error: any Error, host: String, port: Int) -> String {
        let text = String(describing: error)
        if text.contains("Address already in use") || text.contains("EADDRINUSE") {
            return "Port \(port) on \(host) is already in use by another program; choose another with --port (or FERRY_PORT)."
        }
        return "The daemon stopped with an error: \(text)"
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
