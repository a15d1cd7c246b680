import AsyncHTTPClient
import FerryKit
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The transfer engine: a ServiceLifecycle service that runs transfers from the journal, at
/// most `maxConcurrent` at once and the rest in order, with retries, checkpoints and graceful
/// shutdown. Every input (a command, a worker's report, a timer, the network) goes to the
/// ``TransferControl``, which decides; the engine carries out the actions it returns.
public actor TransferEngine: Service {
    public struct Configuration: Sendable {
        /// Transfers downloading at once; the rest wait in order.
        public var maxConcurrent: Int = 4
        /// Checkpoint after this many new bytes...
        public var checkpointBytes: Int64 = 8 << 20
        /// ...or after this long with any new bytes (slow downloads)...
        public var checkpointMaxInterval: Duration = .seconds(2)
        /// ...but not more often than this.
        public var checkpointInterval: Duration = .milliseconds(100)
        public var retry = RetryPolicy()
        public var redirects = RedirectPolicy()
        /// A segmented download's connection quiet this long gives its range up to another.
        public var segmentStall: Duration = .seconds(5)
        /// No range is split into pieces under this (and a download under twice it uses one connection).
        public var segmentMinimumSplit: Int64 = SegmentPlan.minimumSplit
        /// How often live progress is sent to listeners.
        public var progressInterval: Duration = .milliseconds(250)
        /// How often idle event streams get a keep-alive.
        public var heartbeatInterval: Duration = .seconds(15)
        public var userAgent = "Ferry/\(FerryVersion.current)"
        /// The machine's boot id: while it matches the last daemon's, part files are trusted
        /// beyond their last checkpoint (``PartFileTail``). Nil trusts only checkpoints.
        public var bootID: String? = PartFileTail.currentBoot()

        public init() {}
    }

    /// A request to download URLs into a library folder.
    public struct DownloadRequest: Sendable {
        public var urls: [URL]
        public var session: String
        public var force: Bool
        public var folder: String
        /// A file name from metadata, used when the server suggests none.
        public var suggestedName: String?
        /// A file name that wins over the server's (extension added from the response if missing).
        public var preferredName: String?
        public var taskDescription: String?
        /// Overrides of the session's options for these transfers.
        public var options: TransferOptions?
        /// Other URLs of the same file (with one URL only).
        public var mirrors: [URL]
        /// A folder of the user's (absolute) instead of the library's `folder`; nil: the
        /// session's, if it has one.
        public var directory: String?
        /// Create `directory` when it does not exist.
        public var createDirectory: Bool
        /// The file's exact name (with one URL only).
        public var outputName: String?
        public var overwrite: Bool
        /// The digest the file must have (with one URL only).
        public var checksum: Checksum?
        public var priority: TransferPriority
        /// Added paused: it waits for a resume (aria2's `pause` option).
        public var paused: Bool

        public init(
            urls: [URL], session: String, force: Bool = false, folder: String = "Downloads",
            suggestedName: String? = nil, preferredName: String? = nil, taskDescription: String? = nil,
            options: TransferOptions? = nil, mirrors: [URL] = [], directory: String? = nil, createDirectory: Bool = false,
            outputName: String? = nil, overwrite: Bool = false, checksum: Checksum? = nil, priority: TransferPriority = .normal,
            paused: Bool = false
        ) {
            self.paused = paused
            self.urls = urls
            self.session = session
            self.force = force
            self.folder = folder
            self.suggestedName = suggestedName
            self.preferredName = preferredName
            self.taskDescription = taskDescription
            self.options = options
            self.mirrors = mirrors
            self.directory = directory
            self.createDirectory = createDirectory
            self.outputName = outputName
            self.overwrite = overwrite
            self.checksum = checksum
            self.priority = priority
        }
    }

    public nonisolated let configuration: Configuration
    /// Transfers, their events and the sessions' settings: this machine's SQLite journal, or a
    /// cluster's PostgreSQL one.
    public nonisolated let journal: any TransferJournal
    /// This machine's own journal: its boots, aria2 names, and the listening data.
    public nonisolated let local: Journal
    /// In a cluster, the shared queue's claims: only claimed transfers run here. Nil on one machine.
    public nonisolated let leases: (any TransferLeases)?
    public nonisolated let library: Library
    public nonisolated let hub: EventHub
    nonisolated let store: TransferStore
    nonisolated let progress = ProgressBoard()
    nonisolated let bandwidth = Bandwidth()
    /// Connections open to each host, across transfers (a per-host cap).
    nonisolated let hosts = HostConnections()
    nonisolated let worker: TransferWorker
    nonisolated let clock: any Clock<Duration>
    nonisolated let logger: Logger
    /// Told by the ``NetworkWatcher`` when a link, address or route comes: transfers waiting for
    /// the network try again at once, running ones whose connection went quiet reconnect.
    public nonisolated let network: NetworkChanges
    /// Every outbound client: direct, and one per proxy in use.
    public nonisolated let clients: HTTPClients

    /// The one owner of every transfer's control; the engine carries out its actions.
    var control: TransferControl
    /// The workers running, by transfer id.
    var workers: [Int64: Worker] = [:]
    /// Retry timers, by transfer id.
    private var timers: [Int64: Task<Void, Never>] = [:]
    /// Wakes the scheduler when the earliest scheduled transfer (`startAfter`) is due.
    private var wake: Task<Void, Never>?
    /// Wakes at the next edge of a bandwidth schedule's window.
    private var scheduleWake: Task<Void, Never>?
    /// Commands in progress, by transfer id: the next command on the same transfer waits for it.
    var commandsInFlight: [Int64: StopSignal] = [:]
    /// Transfers a worker or retry timer holds, readable without the actor.
    nonisolated let held = Mutex<Set<Int64>>([])
    /// In a cluster: signalled when there may be work to claim (a transfer queued, a slot freed).
    nonisolated let claimWake = Broadcast()
    /// In a cluster: transfers whose claim was lost while a worker still held them; theirs is
    /// given up once the worker has let go, and they are not claimed again before.
    var lostWorkers: Set<Int64> = []
    /// In a cluster: a claim is under way (one at a time).
    var claiming = false

    /// A worker holding a transfer: `stop` asks it to let go, `released` fires once it has (the
    /// part file checkpointed and closed, its report applied).
    final class Worker: Sendable {
        let token: Int
        let stop = StopSignal()
        let released = StopSignal()
        init(token: Int) { self.token = token }
    }

    private nonisolated let jobs: AsyncStream<(Int64, Worker)>
    private nonisolated let jobsContinuation: AsyncStream<(Int64, Worker)>.Continuation
    /// Fired at graceful shutdown.
    nonisolated let shutdown = StopSignal()

    /// An engine whose requests all go out directly through `httpClient` unless a transfer's
    /// options name a proxy.
    public init(
        configuration: Configuration = Configuration(), journal: Journal, library: Library, httpClient: HTTPClient,
        hub: EventHub = EventHub(), clock: any Clock<Duration> = ContinuousClock(), network: NetworkChanges = NetworkChanges(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }, logger: Logger
    ) {
        self.init(
            configuration: configuration, journal: journal, library: library, clients: HTTPClients(direct: httpClient), hub: hub,
            clock: clock, network: network, random: random, logger: logger
        )
    }

    /// - Parameters:
    ///   - clients: the clients for every outbound request, direct and through proxies; they
    ///     must not follow redirects themselves (see ``makeHTTPClient(connectTimeout:readTimeout:)``).
    ///   - clock: drives retry delays; tests pass a manual clock.
    ///   - random: numbers in 0..<1 for backoff jitter.
    public init(
        configuration: Configuration = Configuration(), journal: Journal, library: Library, clients: HTTPClients,
        hub: EventHub = EventHub(), clock: any Clock<Duration> = ContinuousClock(), network: NetworkChanges = NetworkChanges(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }, logger: Logger
    ) {
        self.init(
            configuration: configuration, journal: journal, local: journal, leases: nil, library: library, clients: clients, hub: hub,
            clock: clock, network: network, random: random, logger: logger
        )
    }

    /// - Parameters:
    ///   - journal: transfers, events and settings; in a cluster, the shared one.
    ///   - local: this machine's own journal (the same as `journal` on one machine).
    ///   - leases: in a cluster, the shared queue's claims.
    public init(
        configuration: Configuration = Configuration(), journal: any TransferJournal, local: Journal, leases: (any TransferLeases)?,
        library: Library, clients: HTTPClients, hub: EventHub = EventHub(), clock: any Clock<Duration> = ContinuousClock(),
        network: NetworkChanges = NetworkChanges(), random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: Logger
    ) {
        self.clients = clients
        self.configuration = configuration
        self.journal = journal
        self.local = local
        self.leases = leases
        self.library = library
        self.hub = hub
        self.clock = clock
        self.logger = logger
        self.network = network
        // Journaled events reach live listeners in commit order, straight from the journal.
        journal.onCommit { [hub] event in hub.publish(event) }
        let store = TransferStore(journal: journal)
        self.store = store
        (jobs, jobsContinuation) = AsyncStream.makeStream(of: (Int64, Worker).self)
        control = TransferControl(limits: .init(daemon: configuration.maxConcurrent), shared: leases != nil)
        worker = TransferWorker(
            store: store, library: library,
            fetcher: HTTPFetcher(clients: clients, redirects: configuration.redirects, userAgent: configuration.userAgent, logger: logger),
            progress: progress, bandwidth: bandwidth, network: network, hosts: hosts, configuration: configuration,
            random: random, logger: logger
        )
    }

    /// The HTTP client Ferry uses: no automatic redirects (Ferry checks each hop), no
    /// decompression (bytes on disk are the bytes served), connect and idle-read timeouts, and
    /// no silent retrying of a refused connection: the engine's retry policy (with its backoff
    /// and events) decides, and the catalog reports "connection refused" at once instead of a
    /// timeout at its deadline.
    public static func makeHTTPClient(connectTimeout: Duration = .seconds(15), readTimeout: Duration = .seconds(60)) -> HTTPClient {
        HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: httpClientConfiguration(connectTimeout: connectTimeout, readTimeout: readTimeout)
        )
    }

    /// The configuration of ``makeHTTPClient(connectTimeout:readTimeout:)``, for tests that
    /// add to it (a test certificate).
    public static func httpClientConfiguration(connectTimeout: Duration = .seconds(15), readTimeout: Duration = .seconds(60)) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .init(connectTimeout), read: .init(readTimeout)),
            decompression: .disabled
        )
        configuration.httpVersion = .automatic
        configuration.connectionPool.retryConnectionEstablishment = false
        // AsyncHTTPClient keeps 8 connections per host by default: with more transfers from one
        // host running at once, the rest waited for a connection (1,000 files, 16 at a time).
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        // AsyncHTTPClient's only access to a new connection's channel (named for debugging).
        configuration.http1_1ConnectionDebugInitializer = { useLargeReads($0) }
        configuration.http2ConnectionDebugInitializer = { useLargeReads($0) }
        return configuration
    }

    /// The most a connection reads from its socket at once.
    public static let connectionReadSize = 256 * 1024

    /// NIO reads a socket 64 KiB at a time, up to 4 times each time AsyncHTTPClient asks for
    /// more of a body; one read of up to 256 KiB instead makes a 1 GiB download 2–11 % faster
    /// with 10 % less CPU, for 0.5 MiB more memory at its peak
    /// (bench/reports/2026-11-large-download.md, "Reads of up to 256 KiB"). The buffer grows from
    /// 2 KiB only while reads fill it, as NIO's does.
    static func useLargeReads(_ channel: any Channel) -> EventLoopFuture<Void> {
        let allocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: connectionReadSize)
        return channel.setOption(ChannelOptions.recvAllocator, value: allocator).flatMap {
            channel.setOption(ChannelOptions.maxMessagesPerRead, value: 1)
        }
    }

    // MARK: - Service

    public func run() async throws {
        if leases == nil {
            try await recover()
        } else {
            try await joinCluster()
        }
        if let options = try? await journal.daemonOptions() { clients.setDaemonOptions(options) }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.publishProgress() }
            group.addTask { await self.followNetwork() }
            if let leases { group.addTask { await self.workThroughSharedQueue(leases) } }
            await withGracefulShutdownHandler {
                await self.startControl()
                await self.applySchedules()
                for await (id, worker) in self.jobs {
                    group.addTask { await self.perform(id, worker) }
                }
            } onGracefulShutdown: {
                self.shutdown.fire()
                self.jobsContinuation.finish()
                Task { await self.stopSchedules() }
                Task { await self.input(.shutdown) }
            }
        }
        await leases?.releaseAll()
        hub.close()
        await clients.shutdownProxied()
        logger.info("transfer engine stopped")
    }

    /// Puts back what the last run left: interrupted transfers into the queue, waiting ones'
    /// timers; then starts what is due.
    private func startControl() async {
        await execute(control.recover(now: Date()))
    }

    /// One worker's run: journal its start, run it, apply its report, let go.
    private nonisolated func perform(_ id: Int64, _ holder: Worker) async {
        let report: TransferControl.WorkerReport
        do {
            let record = try await store.write(.started, to: id)!
            let token = holder.token
            report = await worker.run(record: record, signal: holder.stop) { await self.mayFinish(id, token) }
        } catch {
            logger.error("cannot journal a transfer's start", metadata: ["transfer.id": "\(id)", "error": "\(error)"])
            report = .stopped
        }
        await workerEnded(id, holder, report)
    }

    private func workerEnded(_ id: Int64, _ holder: Worker, _ report: TransferControl.WorkerReport) async {
        await input(.workerEnded(id, worker: holder.token, report))
        if workers[id] === holder { workers[id] = nil }
        updateHeld(id)
        holder.released.fire()
        if leases != nil { await workerLetGo(id) }
    }

    private func mayFinish(_ id: Int64, _ token: Int) -> Bool {
        (try? control.handle(.finishing(id, worker: token), now: Date())) != nil
    }

    /// Tells the control when the machine's network changes.
    private nonisolated func followNetwork() async {
        var seen = network.generation
        // Cancelled without a shutdown (the service group torn down after a failure): a wait
        // returns at once when cancelled, so this must stop too, or it spins.
        while !shutdown.isFired, !Task.isCancelled {
            let network = network
            let after = seen
            guard (try? await shutdown.race({ await network.wait(after: after) })) != nil else { return }
            seen = network.generation
            await input(.networkBack)
        }
    }

    private nonisolated func publishProgress() async {
        var sinceHeartbeat = Duration.zero
        while await shutdown.sleep(for: configuration.progressInterval, clock: ContinuousClock()) {
            for event in progress.sample() { hub.publish(event) }
            sinceHeartbeat += configuration.progressInterval
            if sinceHeartbeat >= configuration.heartbeatInterval {
                hub.heartbeat()
                sinceHeartbeat = .zero
            }
        }
    }

    // MARK: - Carrying out the control's actions

    /// An input that is not a person's command: its actions are carried out, and a failure to
    /// journal is logged (the next start puts right what the journal missed).
    func input(_ input: TransferControl.Input) async {
        do {
            await execute(try control.handle(input, now: Date()))
        } catch {
            logger.warning("transfer control refused an input", metadata: ["error": "\(error)"])
        }
    }

    /// Carries out actions in order, logging journal failures.
    func execute(_ actions: [TransferControl.Action]) async {
        do {
            try await execute(actions, for: nil)
        } catch {
            logger.error("cannot journal a transfer's change", metadata: ["error": "\(error)"])
        }
    }

    /// Carries out actions in order. For the transfer a command names (`commanded`), stopping its
    /// worker waits until it has let go (up to ``Transfer/stopWait``), and a journal failure
    /// stops here and is thrown; for others it is logged.
    /// - Returns: the commanded transfer's record as last journaled.
    @discardableResult
    func execute(_ actions: [TransferControl.Action], for commanded: Int64?) async throws -> TransferRecord? {
        // A transfer put back into the queue and started in the same step is journaled once.
        let starting = Set(actions.compactMap { if case .startWorker(let id, _) = $0 { id } else { nil } })
        var written: TransferRecord?
        for action in actions {
            switch action {
            case .journal(let id, .queued(.retry)) where starting.contains(id),
                .journal(let id, .queued(.interrupted)) where starting.contains(id):
                continue
            case .journal(let id, let change):
                do {
                    let record = try await store.write(change, to: id)
                    if id == commanded { written = record }
                } catch let error as FerryError where error.code == .leaseLost {
                    // Another member took the transfer: this one stops working on it.
                    logger.warning("a transfer's claim was lost", metadata: ["transfer.id": "\(id)", "error": "\(error.message)"])
                    await lose(id)
                    if id == commanded { throw error }
                } catch {
                    if id == commanded { throw error }
                    logger.error("cannot journal a transfer's change", metadata: ["transfer.id": "\(id)", "error": "\(error)"])
                }
            case .startWorker(let id, let token):
                let worker = Worker(token: token)
                workers[id] = worker
                jobsContinuation.yield((id, worker))
            case .stopWorker(let id):
                guard let worker = workers[id] else { continue }
                worker.stop.fire()
                if id == commanded {
                    _ = try? await worker.released.race { try await Task.sleep(for: Transfer.stopWait) }
                }
            case .armRetryTimer(let id, let token, let delay):
                timers[id]?.cancel()
                let clock = clock
                timers[id] = Task {
                    guard (try? await clock.sleep(for: delay, tolerance: nil)) != nil else { return }
                    await self.retryDue(id, token)
                }
            case .cancelRetryTimer(let id):
                timers.removeValue(forKey: id)?.cancel()
            case .deletePartFile(let id):
                // The record is still journaled: a removal's own change comes after this.
                let part = (try? await journal.transfer(id: id)).flatMap { $0.map(library.partURL(for:)) } ?? library.partURL(for: id)
                try? FileManager.default.removeItem(at: part)
            case .armScheduleTimer(let date):
                wake?.cancel()
                wake = date.map { date in
                    Task {
                        try? await Task.sleep(for: .seconds(max(0, date.timeIntervalSinceNow)))
                        guard !Task.isCancelled else { return }
                        await self.input(.scheduleDue)
                    }
                }
            }
            if let id = action.transferID { updateHeld(id) }
        }
        if leases != nil {
            for id in Set(actions.compactMap(\.transferID)) { await giveBackIfDone(id) }
        }
        return written
    }

    private func retryDue(_ id: Int64, _ token: Int) async {
        if control.entry(id)?.timer == token { timers[id] = nil }
        await input(.retryDue(id, timer: token))
        updateHeld(id)
    }

    private func updateHeld(_ id: Int64) {
        let isHeld = control.isHeld(id)
        held.withLock { held in
            if isHeld { held.insert(id) } else { held.remove(id) }
        }
    }

    /// Applies changed configuration: limits of running transfers, and the queue.
    func configurationChanged(session: String?, options: TransferOptions) async {
        if options.schedule == nil { bandwidth.update(session: session, bytesPerSecond: options.bytesPerSecond) }
        if session == nil { clients.setDaemonOptions(options) }
        await applySchedules()
    }

    /// Bandwidth by the clock: every schedule's limit as it stands now goes to the limiters and
    /// its pauses to the control (which stops what runs in a closed window); then a wake-up at
    /// the next edge of any window does it again.
    func applySchedules(now: Date = Date()) async {
        scheduleWake?.cancel()
        scheduleWake = nil
        let all: [String: TransferOptions]
        do {
            all = try await journal.allSessionOptions()
        } catch {
            logger.error("cannot read the configuration", metadata: ["error": "\(error)"])
            return
        }
        var next: Date?
        for (key, options) in all {
            guard let schedule = options.schedule else { continue }
            let state = schedule.state(at: now)
            bandwidth.update(session: key == TransferJournalKeys.daemonOptions ? nil : key, bytesPerSecond: state.bytesPerSecond, scheduled: true)
            if let until = state.until { next = min(next ?? until, until) }
        }
        let limits = Self.limits(all, maxConcurrent: configuration.maxConcurrent, now: now)
        if next != nil || !limits.paused.isEmpty {
            logger.debug("schedules applied", metadata: ["paused": "\(limits.paused.sorted())", "next": "\(next.map { "\($0)" } ?? "none")"])
        }
        await input(.limits(limits))
        if let next {
            scheduleWake = Task {
                // Just past the edge, so the window it opens or closes is the one seen.
                try? await Task.sleep(for: .seconds(max(0, next.timeIntervalSinceNow) + 0.05))
                guard !Task.isCancelled else { return }
                await self.scheduleEdge()
            }
        }
    }

    /// A window's edge: its wake-up is done (and must not cancel itself), then the schedules
    /// apply again.
    private func scheduleEdge() async {
        scheduleWake = nil
        await applySchedules()
    }

    private func stopSchedules() {
        scheduleWake?.cancel()
        scheduleWake = nil
    }

    /// The daemon's and the sessions' `maxConcurrent`, and those a schedule holds now.
    static func limits(_ options: [String: TransferOptions], maxConcurrent: Int, now: Date) -> TransferControl.Limits {
        TransferControl.Limits(
            daemon: options[TransferJournalKeys.daemonOptions]?.maxConcurrent ?? maxConcurrent,
            sessions: options.filter { $0.key != TransferJournalKeys.daemonOptions }.compactMapValues(\.maxConcurrent),
            // The daemon's key ("*") is the control's for every session.
            paused: Set(options.filter { $0.value.schedule?.state(at: now).paused == true }.keys)
        )
    }
}
