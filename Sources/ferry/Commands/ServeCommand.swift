import ArgumentParser
import FerryCluster
import FerryCore
import FerryKit
import FerryListening
import FerryServer
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Ferry daemon: the transfer engine and its API on loopback.",
        discussion: """
            Listens on 127.0.0.1:7447. When another program (another user's Ferry, say) holds \
            7447, it takes a free port instead; an address you name with --port or FERRY_PORT \
            must be free. Clients find it through the state folder's daemon.json (`ferry status` \
            prints it) and must send the token in the state folder's `token` file on every API \
            call. Only one daemon runs per state folder.

            Started by systemd with socket activation (`ferry service install`), it serves on the \
            socket systemd hands over (LISTEN_FDS) and reports readiness (NOTIFY_SOCKET).

            SIGTERM or SIGINT stop it gracefully: running transfers are checkpointed and resume \
            when it starts again. --detach starts it in the background, logging to daemon.log.

            --no-hooks: the daemon runs no hook commands (`ferry session set --on-complete`, \
            --on-fail) and no session programs (FerryKit's launchOnEvents), and answers 403 to \
            setting them or a --notify-url; webhooks and desktop notifications already set still \
            go out.
              ferry serve --no-hooks

            --sync-listen serves the gpodder.net sync API (for AntennaPod, gPodder, Kasts on a \
            phone) on a listener of its own, which answers the sync paths and nothing else; a \
            bare port listens on loopback, name an address to be reached from the network. Its \
            users are Ferry's own (`ferry sync user add NAME`). With --sync-certificate and \
            --sync-key (PEM files) it speaks HTTPS. Without --sync-listen, the listener an \
            admin saved on the web app's Settings page (sync.json in the state folder) is used.
              ferry serve --sync-listen 0.0.0.0:8123
              ferry serve --sync-listen 192.168.1.5:8123 --sync-certificate cert.pem --sync-key key.pem

            --listen serves the web app and the API beyond loopback too, for phones and laptops: \
            over HTTPS, with your certificate (--certificate, --private-key; renewed files are \
            read again) or one signed by a CA of Ferry's own that each device trusts once (`ferry \
            remote` shows the URL, a QR code and the fingerprints). There only users log in \
            (`ferry user add NAME`), and the Host must be one of --server-name (default: the \
            host's name and NAME.local) or a listener's address. http://ADDRESS:PORT is plain \
            HTTP for a reverse proxy named by --trusted-proxy, whose X-Forwarded-For, -Proto and \
            -Host then count. `ferry remote enable` keeps these for every start.
              ferry serve --listen 0.0.0.0:8443
              ferry serve --listen 0.0.0.0:443 --certificate fullchain.pem --private-key privkey.pem --server-name ferry.example.org
              ferry serve --listen http://127.0.0.1:8080 --trusted-proxy 127.0.0.1

            --aria2-rpc answers aria2's JSON-RPC (POST /jsonrpc) on loopback, port 6800 unless \
            --aria2-port says otherwise, so aria2's front ends and client libraries drive Ferry; \
            their secret is `ferry aria2 secret`'s.
              ferry serve --aria2-rpc

            --database joins a cluster: daemons on several hosts given the same PostgreSQL \
            database work through one queue, each claiming what it has slots for; a member that \
            dies or is cut off loses its claims after --lease-seconds and the others take its \
            transfers (from its bytes when the library is on storage they all mount). Podcasts, \
            songs, playback, Up Next and phone sync are the cluster's too, and feeds are refreshed \
            by one member at a time. The password may come from the URL or PGPASSWORD. `ferry cluster status` lists the \
            members. See docs/CLUSTER.md.
              FERRY_DATABASE_URL=postgres://ferry@db.lan/ferry ferry serve --member host-a
            """
    )

    @Option(name: .long, help: "Address to listen on. Keep it on loopback: the API is for this machine only.")
    var host = ProcessInfo.processInfo.environment["FERRY_HOST"] ?? "127.0.0.1"

    @Option(name: .long, help: ArgumentHelp("Port to listen on (0: a free one). Default: 7447, or a free port when 7447 is taken.", valueName: "port"))
    var port: Int?

    @Option(name: .long, help: "Transfers that download at once; the rest wait in order.")
    var maxConcurrent = 4

    @Flag(name: .long, help: "Start in the background and return once the daemon answers.")
    var detach = false

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: Logger.Level = .info

    @Flag(name: .long, help: "Run no hook commands or session programs, and refuse to set them (403).")
    var noHooks = false

    @Option(name: .long, help: ArgumentHelp("Serve the sync API for phones here: PORT (loopback) or ADDRESS:PORT.", valueName: "address:port"))
    var syncListen: String?

    @Option(name: .long, help: ArgumentHelp("The sync listener's certificate (PEM): it speaks HTTPS.", valueName: "file"))
    var syncCertificate: String?

    @Option(name: .long, help: ArgumentHelp("The certificate's private key (PEM).", valueName: "file"))
    var syncKey: String?

    @OptionGroup(title: "Beyond loopback") var remote: RemoteOptions

    @Flag(name: .long, help: "Answer aria2's JSON-RPC on loopback (see above; `ferry aria2 enable` turns it on for every start).")
    var aria2Rpc = false

    @Option(name: .long, help: ArgumentHelp("The aria2 RPC's port (default 6800, as aria2's; 0: a free one).", valueName: "port"))
    var aria2Port: Int?

    @Option(name: .long, help: ArgumentHelp("Join a cluster: the queue is in this PostgreSQL database, shared with every daemon given it (default: FERRY_DATABASE_URL; none: this machine's SQLite journal).", valueName: "postgres://user@host/db"))
    var database: String?

    @Option(name: .long, help: ArgumentHelp("This daemon's name in the cluster (default: the host's name).", valueName: "name"))
    var member: String?

    @Option(name: .long, help: ArgumentHelp("How long a member's claim on a transfer lasts unless renewed: a dead member's transfers go to the others after it.", valueName: "seconds"))
    var leaseSeconds = 10

    @Option(name: .long, help: ArgumentHelp("Events kept for sessions that never acknowledge them (the CLI, the web app, aria2's RPC): this many days at most.", valueName: "days"))
    var eventDays = 7

    @Option(name: .long, help: ArgumentHelp("…and at most this many events a session (the newest).", valueName: "n"))
    var eventCount = 10_000

    @Option(name: .long, help: ArgumentHelp("Finished transfers kept in the list as history: this many days at most (their files stay).", valueName: "days"))
    var historyDays = 365

    @Option(name: .long, help: ArgumentHelp("…and at most this many (the newest).", valueName: "n"))
    var historyCount = 10_000

    @Option(name: .long, help: ArgumentHelp("Episodes a feed no longer lists, that nobody downloaded, played or queued, are forgotten this many days later (0: kept for ever).", valueName: "days"))
    var goneEpisodeDays = PodcastLibrary.defaultGoneEpisodeDays

    /// The port the user named (flag, then FERRY_PORT); nil for the default.
    var requestedPort: Int? { port ?? ProcessInfo.processInfo.environment["FERRY_PORT"].flatMap { Int($0) } }

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535.") }
        if port == nil, let text = ProcessInfo.processInfo.environment["FERRY_PORT"], !(Int(text).map { (0...65535).contains($0) } ?? false) {
            throw ValidationError("FERRY_PORT must be a port number between 0 and 65535 ('\(text.prefix(20))' is not).")
        }
        guard (1...256).contains(maxConcurrent) else { throw ValidationError("--max-concurrent must be between 1 and 256.") }
        if let syncListen {
            do { _ = try SyncListener.parse(syncListen) } catch let error as FerryError { throw ValidationError(error.message) }
        }
        if let aria2Port, !(0...65535).contains(aria2Port) { throw ValidationError("--aria2-port must be between 0 and 65535.") }
        if aria2Port != nil, !aria2Rpc { throw ValidationError("--aria2-port needs --aria2-rpc.") }
        guard (2...600).contains(leaseSeconds) else { throw ValidationError("--lease-seconds must be between 2 and 600.") }
        guard (1...3650).contains(eventDays) else { throw ValidationError("--event-days must be between 1 and 3650.") }
        guard eventCount >= 100 else { throw ValidationError("--event-count must be at least 100.") }
        guard (1...36500).contains(historyDays) else { throw ValidationError("--history-days must be between 1 and 36500.") }
        guard historyCount >= 1 else { throw ValidationError("--history-count must be at least 1.") }
        guard (0...36500).contains(goneEpisodeDays) else { throw ValidationError("--gone-episode-days must be between 0 (kept for ever) and 36500.") }
        if let member, member.isEmpty || member.count > 64 || member.contains(where: { $0.isWhitespace }) {
            throw ValidationError("--member must be 1 to 64 characters, without spaces.")
        }
        if (syncCertificate == nil) != (syncKey == nil) { throw ValidationError("--sync-certificate and --sync-key go together.") }
        if syncCertificate != nil, syncListen == nil { throw ValidationError("--sync-certificate needs --sync-listen.") }
        for file in [syncCertificate, syncKey].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("Cannot read \(file).")
        }
    }

    /// The cluster's database: the flag, else FERRY_DATABASE_URL.
    var databaseURL: String? {
        database ?? ProcessInfo.processInfo.environment["FERRY_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Connects to the cluster's database (bringing its schema up to date) as this member.
    func joinCluster(_ url: String, address: String, logger: Logger) async throws -> SharedQueue {
        var url = url
        if var parts = URLComponents(string: url), parts.password == nil, let password = ProcessInfo.processInfo.environment["PGPASSWORD"] {
            parts.password = password
            url = parts.string ?? url
        }
        let journal = try await PostgresJournal.connect(to: url, logger: logger)
        let name = member ?? ProcessInfo.processInfo.hostName
        logger.info("joining the cluster", metadata: ["member": "\(name)", "database": "\(PostgresJournal.redacted(url))"])
        return SharedQueue(
            journal: journal, leases: PostgresLeases(journal: journal, member: name, address: address, leaseDuration: .seconds(leaseSeconds)),
            listening: PostgresListeningStore(journal: journal)
        )
    }

    /// The sync listener asked for, if any.
    var syncListener: SyncListener? {
        guard let syncListen, let (host, port) = try? SyncListener.parse(syncListen) else { return nil }
        func absolute(_ path: String?) -> String? {
            path.map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
        }
        return SyncListener(host: host, port: port, certificate: absolute(syncCertificate), key: absolute(syncKey))
    }

    func run() async throws {
        let paths = FerryPaths.resolve()
        if detach {
            var arguments = ["serve", "--host", host, "--max-concurrent", String(maxConcurrent), "--log-level", logLevel.rawValue]
            if let port { arguments += ["--port", String(port)] }
            if noHooks { arguments.append("--no-hooks") }
            if let database { arguments += ["--database", database] }
            if let member { arguments += ["--member", member] }
            arguments += ["--lease-seconds", String(leaseSeconds)]
            if aria2Rpc { arguments += ["--aria2-rpc", "--aria2-port", String(aria2Port ?? Aria2Listener.defaultPort)] }
            if let sync = syncListener {
                arguments += ["--sync-listen", "[\(sync.host)]:\(sync.port)"]
                if let certificate = sync.certificate, let key = sync.key { arguments += ["--sync-certificate", certificate, "--sync-key", key] }
            }
            arguments += remote.arguments
            try await Detach.start(arguments: arguments, paths: paths)
            return
        }
        // A proxy variable Ferry cannot use is an error before anything starts.
        let proxies: ProxyEnvironment
        do {
            proxies = try ProxyEnvironment(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw FerryError(.invalidRequest, "The daemon's environment names a proxy it cannot use: \(error.message)")
        }
        let lock = try DaemonLock(paths: paths)
        let socket = try ListeningSocket.inherited()
            ?? ListeningSocket.bind(host: host, port: requestedPort ?? DaemonConfiguration.defaultPort, fallbackToFreePort: requestedPort == nil)
        // Kept open past the server's shutdown, for a restart to hand over as systemd would:
        // the same address (systemd's own socket, too), requests meanwhile waiting in its queue.
        let spare = fcntl(socket.descriptor, F_DUPFD_CLOEXEC, 3)
        Heap.configureForDaemon()
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "ferry")
        var configuration = DaemonConfiguration(paths: paths)
        configuration.host = socket.host ?? host
        configuration.port = socket.port ?? 0
        configuration.engine.maxConcurrent = maxConcurrent
        configuration.engine.eventRetention.window = RetentionLimit(days: Double(eventDays), count: eventCount)
        configuration.engine.historyRetention = RetentionLimit(days: Double(historyDays), count: historyCount)
        configuration.goneEpisodeDays = goneEpisodeDays == 0 ? nil : goneEpisodeDays
        // Tests only: a clock moved ahead by a file's seconds, for retention over a simulated year.
        if let clock = TestClockFile(environment: ProcessInfo.processInfo.environment) { configuration.engine.now = { clock.now() } }
        configuration.catalogBaseURL = try CatalogClient.baseURL()
        configuration.proxies = proxies
        configuration.hooksEnabled = !noHooks
        // The options, else the sync listener saved from an admin's settings page.
        configuration.sync = try syncListener ?? ListenerSettingFiles(paths: paths).sync().map(SyncListener.init)
        // The options, else `ferry remote enable`'s setting.
        configuration.remote = remote.listen.isEmpty ? try RemoteSetting.read(paths) : remote.settings()
        if let port = aria2Rpc ? aria2Port ?? Aria2Listener.defaultPort : Aria2Setting.port(paths) { configuration.aria2 = Aria2Listener(port: port) }
        if !proxies.isEmpty { logger.info("proxies from the environment", metadata: ["proxy.environment": "\(proxies)"]) }
        if let url = databaseURL {
            configuration.cluster = try await joinCluster(url, address: "http://\(configuration.host):\(configuration.port)", logger: logger)
        }
        let httpClient = TransferEngine.makeHTTPClient()
        let restart = Atomic<Bool>(false)
        let daemon: FerryDaemon
        do {
            daemon = try buildDaemon(configuration, httpClient: httpClient, logger: logger) { stop in
                if stop == .restart { restart.store(true, ordering: .relaxed) }
                // The same path as a signal: the service group shuts down gracefully.
                kill(getpid(), SIGTERM)
            }
        } catch {
            // A client dropped unshut crashes the process, and the reason with it.
            try? await httpClient.shutdown()
            throw error
        }
        let notifier = SystemdNotifier()
        let services = daemon.services(
            listeningOn: socket,
            whenListening: { notifier.ready(status: "Serving on \(daemon.address.url ?? "its socket")") },
            whenStopping: { restart.load(ordering: .relaxed) ? notifier.reloading() : notifier.stopping() }
        ) + [LogRotationService(path: paths.daemonLog.path)]
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        )
        do {
            try await group.run()
        } catch {
            DaemonInfoFile.remove(paths: paths, pid: getpid())
            try? await httpClient.shutdown()
            throw FerryError(.daemonStartFailed, "The daemon stopped with an error: \(error)")
        }
        DaemonInfoFile.remove(paths: paths, pid: getpid())
        try await httpClient.shutdown()
        withExtendedLifetime(lock) {}
        guard restart.load(ordering: .relaxed), spare >= 0 else { return logger.info("stopped") }
        logger.info("restarting")
        try Self.runAgain(listeningOn: spare)
    }

    /// Replaces this process with `ferry serve` as it was started (the same arguments,
    /// environment and process id: systemd's unit and a terminal keep it), handing it the
    /// listening socket as systemd does (descriptor 3, `LISTEN_FDS`, `LISTEN_PID`). Every other
    /// descriptor closes on exec (the lock, the journal, the other sockets).
    static func runAgain(listeningOn socket: CInt) throws -> Never {
        // dup2 leaves close-on-exec off on descriptor 3.
        guard socket == 3 || dup2(socket, 3) == 3 else {
            throw FerryError(.daemonStartFailed, "Could not keep the daemon's socket: \(String(cString: strerror(errno))). Start it with `ferry serve`.")
        }
        if socket == 3 { _ = fcntl(3, F_SETFD, 0) }
        setenv("LISTEN_FDS", "1", 1)
        setenv("LISTEN_PID", String(getpid()), 1)
        unsetenv("LISTEN_FDNAMES")
        let arguments = CommandLine.arguments.map { strdup($0) } + [nil]
        execv("/proc/self/exe", arguments)
        throw FerryError(.daemonStartFailed, "Could not start the daemon again: \(String(cString: strerror(errno))). Start it with `ferry serve`.")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
