import AsyncHTTPClient
import FerryCore
import FerryKit
import FerryListening
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Everything `ferry serve` runs: the transfer engine and the HTTP API on loopback.
package struct DaemonConfiguration: Sendable {
    /// The interface to listen on; loopback by default.
    package var host: String = "127.0.0.1"
    /// 7447 by default; 0 picks a free port (tests).
    package var port: Int = Self.defaultPort
    /// Where a daemon listens unless told otherwise (or unless another program holds it).
    package static let defaultPort = 7447
    package var paths: FerryPaths
    package var engine = TransferEngine.Configuration()
    /// Write `daemon.json` so clients can find this daemon.
    package var publishesAddress = true
    /// Apple's catalog, or a stand-in (`FERRY_CATALOG_URL`).
    package var catalogBaseURL: URL = CatalogClient.defaultBaseURL
    /// How often every podcast feed is refreshed.
    package var podcastRefreshInterval: Duration = .seconds(3600)
    /// Episodes a feed stopped listing, that nobody downloaded, played or queued, are forgotten
    /// after this many days (`ferry serve --gone-episode-days`); nil: kept for ever.
    package var goneEpisodeDays: Int? = PodcastLibrary.defaultGoneEpisodeDays
    /// False (`ferry serve --no-hooks`): hooks and session programs are refused and never run.
    package var hooksEnabled = true
    /// The desktop's session bus for notifications (`DBUS_SESSION_BUS_ADDRESS`); nil: none.
    package var desktopBus = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]
    /// Hooks still running after this are killed; webhooks are tried again after these pauses.
    package var hookTimeout: Duration = .seconds(60)
    package var webhookDelays: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16)]
    /// The proxies of the daemon's environment (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`).
    package var proxies = ProxyEnvironment()
    /// What clients for proxies are made from: the direct client's configuration.
    package var httpClientConfiguration = TransferEngine.httpClientConfiguration()
    /// Where phones sync (the gpodder.net API; `ferry serve --sync-listen`); nil: not at all.
    package var sync: SyncListener?
    /// aria2's JSON-RPC for its front ends (`ferry serve --aria2-rpc`); nil: off.
    package var aria2: Aria2Listener?
    /// The web app and the API beyond loopback, over HTTPS (`ferry serve --listen`,
    /// `ferry remote enable`); nil: loopback only.
    package var remote: RemoteSettings?
    /// A cluster's shared journal and this member's claims (`ferry serve --database`); nil: the
    /// state folder's SQLite journal, one machine.
    package var cluster: SharedQueue?

    package init(paths: FerryPaths) {
        self.paths = paths
        engine.networkManagerMetered = NetworkManagerMetered.read
    }
}

/// The modules' tables in the daemon's SQLite journal: every opening of it names them all.
package let journalTables: [SQLiteTables] = [.listening, .aria2]

/// The built daemon: run ``application`` (a ServiceLifecycle service) to serve.
package struct FerryDaemon: Sendable {
    package let application: Application<RouterResponder<FerryRequestContext>>
    package let engine: TransferEngine
    package let podcasts: PodcastLibrary
    package let catalog: CatalogLibrary
    package let sync: SyncLibrary
    package let token: String
    /// The listening address, once the server runs.
    package let address: DaemonAddress
    /// The sync listener's address, once it runs (if it was asked for).
    package let syncAddress: DaemonAddress
    /// The aria2 RPC's URL (`…/jsonrpc`), once it runs (if it was asked for).
    package let aria2Address: DaemonAddress
    /// The listeners beyond loopback, if asked for.
    package let remote: RemoteListeners?
    let onServerRunning: @Sendable (any Channel) async -> Void
    let logger: Logger
}

/// Builds the daemon. `ferry serve` and the tests both call this; dependencies come in.
/// - Parameters:
///   - httpClient: for every outbound request (see ``TransferEngine/makeHTTPClient(connectTimeout:readTimeout:)``).
///   - clock: drives retry delays.
///   - requestShutdown: called by `POST /v1/shutdown` (``DaemonStop/shutdown``) and an admin's
///     `POST /v1/restart` (``DaemonStop/restart``); it should start a graceful shutdown.
package func buildDaemon(
    _ configuration: DaemonConfiguration, httpClient: HTTPClient, clock: any Clock<Duration> = ContinuousClock(),
    logger: Logger, requestShutdown: @escaping @Sendable (DaemonStop) -> Void
) throws -> FerryDaemon {
    let paths = configuration.paths
    let journal: SQLiteJournal
    do {
        journal = try SQLiteJournal.open(at: paths.journal, tables: journalTables, now: configuration.engine.now)
    } catch {
        throw FerryError(
            .daemonStartFailed,
            "The journal \(paths.journal.path) cannot be opened (\(error)). If it is damaged, `ferry doctor --fix` copies it aside and recovers what can be read."
        )
    }
    let engine = TransferEngine(
        configuration: configuration.engine, journal: configuration.cluster?.journal ?? journal, local: journal,
        leases: configuration.cluster?.leases, library: LibraryFolder(root: paths.library),
        clients: HTTPClients(direct: httpClient, configuration: configuration.httpClientConfiguration, environment: configuration.proxies),
        clock: clock, logger: logger
    )
    let catalog = CatalogLibrary(
        catalog: CatalogClient(baseURL: configuration.catalogBaseURL, clients: engine.clients, clock: clock, logger: logger),
        engine: engine, store: configuration.cluster?.listening
    )
    var podcasts = PodcastLibrary(engine: engine, catalog: catalog.catalog, store: configuration.cluster?.listening, logger: logger)
    podcasts.goneEpisodeDays = configuration.goneEpisodeDays
    // One daemon makes every change to its accounts' credentials; a cluster's members each may.
    let accounts = AccountLibrary(store: podcasts.store, keepsCredentials: configuration.cluster == nil)
    let sync = SyncLibrary(podcasts: podcasts, accounts: accounts, logger: logger)
    let token = try DaemonToken.loadOrCreate(paths)
    let parts = DaemonParts(
        configuration: configuration, token: token, engine: engine, catalog: catalog, podcasts: podcasts,
        sync: sync, syncAuth: SyncAuthenticator(sync: sync), login: WebLogin(token: token), pairing: ExtensionPairing(paths: paths),
        accountLogin: AccountLogin(accounts: sync.accounts, logger: logger),
        remote: try configuration.remote.map { try RemoteListeners(settings: $0, state: paths.state, logger: logger) }, logger: logger
    )
    let refresher = PodcastRefresher(podcasts: podcasts, sync: sync, interval: configuration.podcastRefreshInterval, clock: clock, logger: logger)
    let onServerRunning = parts.onServerRunning()
    let application = Application(
        router: parts.router(requestShutdown: requestShutdown),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Ferry"),
        services: [
            engine, refresher, TranscriptIndexer(podcasts: podcasts, clock: clock, logger: logger), HeapTrimmer(clock: clock, logger: logger), NetworkWatcher(changes: engine.network, logger: logger),
            TransferAnnouncer(
                engine: engine, runsCommands: configuration.hooksEnabled, desktopBus: configuration.desktopBus,
                hookTimeout: configuration.hookTimeout, webhookDelays: configuration.webhookDelays, logger: logger
            ),
        ] + (try parts.listeners(requestShutdown: requestShutdown)),
        onServerRunning: onServerRunning,
        logger: logger
    )
    return FerryDaemon(
        application: application, engine: engine, podcasts: podcasts, catalog: catalog, sync: sync, token: parts.token,
        address: parts.address, syncAddress: parts.syncAddress, aria2Address: parts.aria2Address, remote: parts.remote,
        onServerRunning: onServerRunning,
        logger: logger
    )
}

/// What the daemon's routes and listeners are made of, made once by ``buildDaemon(_:httpClient:clock:logger:requestShutdown:)``.
private struct DaemonParts {
    let configuration: DaemonConfiguration
    let token: String
    let engine: TransferEngine
    let catalog: CatalogLibrary
    let podcasts: PodcastLibrary
    let sync: SyncLibrary
    let syncAuth: SyncAuthenticator
    let login: WebLogin
    let pairing: ExtensionPairing
    /// The API's transfer lists, for every listener.
    let transferPages = TransferPageCache()
    let accountLogin: AccountLogin
    let remote: RemoteListeners?
    let logger: Logger
    var accounts: AccountLibrary { sync.accounts }
    let address = DaemonAddress()
    let syncAddress = DaemonAddress()
    let aria2Address = DaemonAddress()
    let startedAt = Date()

    /// The web app and the API: on the loopback listener, or (`remote`) on one beyond it.
    func router(requestShutdown: @escaping @Sendable (DaemonStop) -> Void, remote: (rules: RemoteRules, tls: Bool)? = nil) -> Router<FerryRequestContext> {
        let router = Router(context: FerryRequestContext.self)
        router.add(middleware: SecurityHeadersMiddleware())
        if remote?.tls == true { router.add(middleware: StrictTransportMiddleware()) }
        router.add(middleware: ErrorMiddleware())
        if let remote {
            router.add(middleware: RemoteGuardMiddleware(rules: remote.rules, tls: remote.tls))
        } else {
            router.add(middleware: LoopbackGuardMiddleware())
        }
        // The web app's files, from the binary: package (no secrets in them); the API they call needs a login.
        router.add(middleware: WebAppMiddleware())
        let web = WebRoutes(engine: engine, podcasts: podcasts, login: login, accounts: accounts, address: address)
        web.registerPublic(on: router)
        let browserExtension = ExtensionRoutes(pairing: pairing, address: address)
        browserExtension.registerPublic(on: router)
        let users = UserRoutes(accounts: accounts, login: accountLogin, syncAuth: syncAuth)
        users.registerPublic(on: router)
        let remoteRoutes = RemoteRoutes(listeners: self.remote)
        remoteRoutes.registerPublic(on: router)
        if remote != nil {
            // Phones sync and aria2's clients call where the web app is served (their own credentials).
            SyncRoutes(sync: sync, auth: syncAuth, subscribeInBackground: { [sync] in Task { await sync.subscribePending() } }, scheme: "https")
                .register(on: router)
            if configuration.aria2 != nil, let secret = try? SecretFile.loadOrCreate(configuration.paths.aria2Secret, in: configuration.paths.state) {
                Aria2Listener.register(Aria2RPC(engine: engine, secret: secret, sessionId: Aria2Listener.sessionId()), on: router)
            }
        }
        let api = router.group("v1").add(middleware: TokenAuthMiddleware(token: token, login: login, pairing: pairing, accounts: accounts))
        users.register(on: api)
        remoteRoutes.register(on: api)
        web.registerAPI(on: api)
        browserExtension.registerAPI(on: api)
        TransferRoutes(engine: engine, pages: transferPages).register(on: api)
        UploadRoutes(engine: engine).register(on: api)
        ConfigRoutes(engine: engine, hooksEnabled: configuration.hooksEnabled).register(on: api)
        EventRoutes(engine: engine).register(on: api)
        CatalogRoutes(catalog: catalog).register(on: api)
        PodcastRoutes(podcasts: podcasts).register(on: api)
        ListeningRoutes(podcasts: podcasts).register(on: api)
        SyncUserRoutes(sync: sync, auth: syncAuth, address: syncAddress).register(on: api)
        CredentialRoutes(engine: engine).register(on: api)
        ListenerSettingsRoutes(files: ListenerSettingFiles(paths: configuration.paths), remote: self.remote, aria2Address: aria2Address, syncAddress: syncAddress)
            .register(on: api)
        DoctorRoutes(
            engine: engine, podcasts: podcasts, paths: configuration.paths, address: address, syncAddress: syncAddress,
            aria2Address: aria2Address, remote: self.remote
        ).register(on: api)
        DaemonRoutes(
            engine: engine, paths: configuration.paths, startedAt: startedAt, address: address, syncAddress: syncAddress,
            aria2Address: aria2Address, requestShutdown: requestShutdown
        ).register(on: api)
        return router
    }

    /// Once the loopback listener is bound: its URL is known, logged, and published in
    /// `daemon.json` for the CLI.
    func onServerRunning() -> @Sendable (any Channel) async -> Void {
        let (configuration, address, logger, startedAt) = (configuration, address, logger, startedAt)
        return { channel in
            let port = channel.localAddress?.port ?? configuration.port
            let host = channel.localAddress?.ipAddress ?? configuration.host
            let url = "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
            address.set(url)
            logger.info("listening", metadata: ["daemon.url": "\(url)", "daemon.library": "\(configuration.paths.library.path)"])
            guard configuration.publishesAddress else { return }
            let info = DaemonInfo(url: url, pid: getpid(), version: FerryVersion.current, startedAt: startedAt)
            do {
                try DaemonInfoFile.write(info, paths: configuration.paths)
            } catch {
                logger.error("could not write daemon.json", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The listeners beyond loopback, the sync and aria2 listeners, when enabled. Last among the
    /// services, so a graceful shutdown stops answering phones and aria2's front ends first.
    func listeners(requestShutdown: @escaping @Sendable (DaemonStop) -> Void) throws -> [any Service] {
        var listeners: [any Service] = try remote?.services(
            router: { rules, tls in router(requestShutdown: requestShutdown, remote: (rules, tls)) }, logger: logger
        ) ?? []
        if let listener = configuration.sync {
            listeners.append(try listener.application(sync: sync, auth: syncAuth, address: syncAddress, logger: logger))
        }
        if let listener = configuration.aria2 {
            let secret = try SecretFile.loadOrCreate(configuration.paths.aria2Secret, in: configuration.paths.state)
            listeners.append(listener.application(engine: engine, secret: secret, address: aria2Address, logger: logger))
        }
        return listeners
    }
}

extension FerryDaemon {
    /// The daemon's services serving on a socket that already listens (handed over by systemd,
    /// or bound by `ferry serve`), for a service group; the HTTP server is last, so a graceful
    /// shutdown stops it first, as ``application`` does.
    /// - Parameters:
    ///   - whenListening: called once the API answers (after `daemon.json` is written).
    ///   - whenStopping: called when a graceful shutdown begins.
    package func services(
        listeningOn socket: ListeningSocket, whenListening: @escaping @Sendable () -> Void = {},
        whenStopping: @escaping @Sendable () -> Void = {}
    ) -> [any Service] {
        let announce = onServerRunning
        return application.services + [
            SocketServer(
                socket: socket, responder: application.responder,
                onServerRunning: { channel in
                    await announce(channel)
                    whenListening()
                },
                onShutdown: whenStopping, logger: logger
            )
        ]
    }
}

/// A cluster's queue as a daemon runs on it: the shared journal and this member's claims.
package struct SharedQueue: Sendable {
    package var journal: any TransferJournal
    package var leases: any TransferLeases
    /// The library every member shows: podcasts, episodes, songs, playback, Up Next, sync.
    package var listening: any ListeningStore

    package init(journal: any TransferJournal, leases: any TransferLeases, listening: any ListeningStore) {
        self.journal = journal
        self.leases = leases
        self.listening = listening
    }
}
