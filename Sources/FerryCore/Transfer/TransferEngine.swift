import AsyncHTTPClient
import FerryKit
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The transfer engine: a ServiceLifecycle service that runs transfers from the journal, at
/// most `maxConcurrent` at once and the rest in order, with retries, checkpoints and graceful
/// shutdown. Commands (pause, resume, cancel...) are applied to the journal through
/// ``TransferLifecycle`` and then carried out here.
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

        public init(
            urls: [URL], session: String, force: Bool = false, folder: String = "Downloads",
            suggestedName: String? = nil, preferredName: String? = nil, taskDescription: String? = nil,
            options: TransferOptions? = nil
        ) {
            self.urls = urls
            self.session = session
            self.force = force
            self.folder = folder
            self.suggestedName = suggestedName
            self.preferredName = preferredName
            self.taskDescription = taskDescription
            self.options = options
        }
    }

    public nonisolated let configuration: Configuration
    public nonisolated let journal: Journal
    public nonisolated let library: Library
    public nonisolated let hub: EventHub
    nonisolated let store: TransferStore
    nonisolated let progress = ProgressBoard()
    nonisolated let bandwidth = Bandwidth()
    nonisolated let worker: TransferWorker
    nonisolated let clock: any Clock<Duration>
    nonisolated let logger: Logger
    /// Told by the ``NetworkWatcher`` when a link, address or route comes: transfers waiting for
    /// the network try again at once, running ones whose connection went quiet reconnect.
    public nonisolated let network: NetworkChanges
    /// Every outbound client: direct, and one per proxy in use.
    public nonisolated let clients: HTTPClients

    private enum Job: Sendable {
        case download(Int64, Holder)
        /// A waiting transfer's timer; with `forNetwork`, a network change ends it early.
        case retryTimer(Int64, after: Duration, forNetwork: Bool, Holder)
    }

    /// The task (a download or a retry timer) holding a transfer: `stop` asks it to let go,
    /// `released` fires once it has (the part file checkpointed and closed).
    final class Holder: Sendable {
        let stop = StopSignal()
        let released = StopSignal()
    }

    private nonisolated let jobs: AsyncStream<Job>
    private nonisolated let jobsContinuation: AsyncStream<Job>.Continuation
    /// Fired at graceful shutdown.
    private nonisolated let shutdown = StopSignal()
    /// The task (download or retry timer) holding each transfer, by id.
    nonisolated let holders = Mutex<[Int64: Holder]>([:])
    /// Transfers whose holder is running them (not a timer), with their sessions: these use
    /// the slots.
    private var running: [Int64: String] = [:]
    /// Wakes the scheduler when the earliest scheduled transfer (`startAfter`) is due.
    private var wake: (at: Date, task: Task<Void, Never>)?

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
        self.clients = clients
        self.configuration = configuration
        self.journal = journal
        self.library = library
        self.hub = hub
        self.clock = clock
        self.logger = logger
        self.network = network
        // Journaled events reach live listeners in commit order, straight from the journal.
        journal.onCommit { [hub] event in hub.publish(event) }
        let store = TransferStore(journal: journal)
        self.store = store
        (jobs, jobsContinuation) = AsyncStream.makeStream(of: Job.self)
        worker = TransferWorker(
            store: store, library: library,
            fetcher: HTTPFetcher(clients: clients, redirects: configuration.redirects, userAgent: configuration.userAgent, logger: logger),
            progress: progress, bandwidth: bandwidth, network: network, configuration: configuration, random: random, logger: logger
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
    /// with 10 % less CPU, for 0.5 MiB more memory at its peak (docs/PERFORMANCE.md, scenario
    /// 1). The buffer grows from 2 KiB only while reads fill it, as NIO's does.
    static func useLargeReads(_ channel: any Channel) -> EventLoopFuture<Void> {
        let allocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: connectionReadSize)
        return channel.setOption(ChannelOptions.recvAllocator, value: allocator).flatMap {
            channel.setOption(ChannelOptions.maxMessagesPerRead, value: 1)
        }
    }

    // MARK: - Service

    public func run() async throws {
        try await recover()
        if let options = try? await journal.daemonOptions() { clients.setDaemonOptions(options) }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.publishProgress() }
            await withGracefulShutdownHandler {
                await self.schedule()
                for await job in self.jobs {
                    group.addTask { await self.perform(job) }
                }
            } onGracefulShutdown: {
                self.shutdown.fire()
                Task { await self.cancelWake() }
                self.jobsContinuation.finish()
                for holder in self.holders.withLock({ Array($0.values) }) { holder.stop.fire() }
            }
        }
        hub.close()
        await clients.shutdownProxied()
        logger.info("transfer engine stopped")
    }

    private func cancelWake() {
        wake?.task.cancel()
        wake = nil
    }

    private nonisolated func perform(_ job: Job) async {
        switch job {
        case .download(let id, let holder):
            let outcome = await worker.run(id: id, signal: holder.stop)
            await downloadEnded(id, holder: holder, outcome: outcome)
        case .retryTimer(let id, let delay, let forNetwork, let holder):
            let network = network
            let seen = network.generation
            let wake: (@Sendable () async -> Void)? = forNetwork ? { @Sendable in await network.wait(after: seen) } : nil
            let due = await holder.stop.sleep(for: delay, clock: clock, orUntil: wake)
            await retryTimerEnded(id, holder: holder, elapsed: due)
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

    // MARK: - Scheduling

    /// Starts queued transfers that are due, oldest first, while slots are free — the daemon's
    /// and each session's (`maxConcurrent`).
    func schedule() async {
        guard !shutdown.isFired else { return }
        let options: [String: TransferOptions]
        do {
            options = try await journal.allSessionOptions()
        } catch {
            logger.error("cannot read the configuration", metadata: ["error": "\(error)"])
            return
        }
        let daemonLimit = options[Journal.daemonOptionsKey]?.maxConcurrent ?? configuration.maxConcurrent
        let sessionLimits = options.compactMapValues(\.maxConcurrent)
        let free = daemonLimit - running.count
        let now = Date()
        if free > 0 {
            let held = Set(holders.withLock { $0.keys })
            // Sessions at their own limit may hold the head of the queue: look further.
            let window = sessionLimits.isEmpty ? free : free + 256
            let candidates: [TransferRecord]
            do {
                candidates = try await journal.queued(limit: window, excluding: held, dueBy: now)
            } catch {
                logger.error("cannot read the queue", metadata: ["error": "\(error)"])
                return
            }
            var perSession = Dictionary(running.values.map { ($0, 1) }, uniquingKeysWith: +)
            for record in candidates {
                let id = record.transferId
                guard !shutdown.isFired, running.count < daemonLimit else { break }
                if let limit = sessionLimits[record.session], perSession[record.session, default: 0] >= limit { continue }
                let holder = Holder()
                let taken = holders.withLock { holders -> Bool in
                    guard holders[id] == nil else { return false }
                    holders[id] = holder
                    return true
                }
                guard taken else { continue }
                running[id] = record.session
                perSession[record.session, default: 0] += 1
                jobsContinuation.yield(.download(id, holder))
            }
        }
        await wakeForNextScheduledStart(after: now)
    }

    /// After a command stopped the transfer's worker or timer and then could not journal its
    /// change: a transfer still waiting to retry gets its timer back, and one still running goes
    /// back to the queue, as recovery would put it at the next start, instead of standing still.
    func restoreHolder(_ id: Int64) async {
        guard !shutdown.isFired, holders.withLock({ $0[id] == nil }), let record = try? await journal.transfer(id: id) else { return }
        switch record.state {
        case .running:
            let requeued = try? await store.update(id: id) { record in
                if record.state == .running { record.state = .queued }
                return nil
            }
            if requeued?.state == .queued { await schedule() }
        case .waiting:
            startRetryTimer(for: record)
        default:
            break
        }
    }

    /// Keeps one timer for the earliest queued transfer that is not due yet.
    private func wakeForNextScheduledStart(after now: Date) async {
        let next = try? await journal.nextScheduledStart(after: now)
        guard next != wake?.at else { return }
        wake?.task.cancel()
        wake = nil
        guard let next, !shutdown.isFired else { return }
        let task = Task {
            try? await Task.sleep(for: .seconds(max(0, next.timeIntervalSinceNow)))
            guard !Task.isCancelled else { return }
            await self.woke()
        }
        wake = (next, task)
    }

    private func woke() async {
        wake = nil
        await schedule()
    }

    /// Applies changed configuration: limits of running transfers, and the queue.
    func configurationChanged(session: String?, options: TransferOptions) async {
        bandwidth.update(session: session, bytesPerSecond: options.bytesPerSecond)
        if session == nil { clients.setDaemonOptions(options) }
        await schedule()
    }

    private func release(_ id: Int64, _ holder: Holder) {
        holders.withLock { holders in
            if holders[id] === holder { holders[id] = nil }
        }
        holder.released.fire()
    }

    private func downloadEnded(_ id: Int64, holder: Holder, outcome: TransferWorker.Outcome) async {
        release(id, holder)
        running[id] = nil
        if case .wait(let delay, let forNetwork) = outcome, !shutdown.isFired {
            startRetryTimer(id, after: delay, forNetwork: forNetwork)
        }
        await deletePartFileIfAbandoned(id)
        await schedule()
    }

    private func startRetryTimer(_ id: Int64, after delay: Duration, forNetwork: Bool) {
        let holder = Holder()
        let taken = holders.withLock { holders -> Bool in
            guard holders[id] == nil else { return false }
            holders[id] = holder
            return true
        }
        if taken { jobsContinuation.yield(.retryTimer(id, after: delay, forNetwork: forNetwork, holder)) }
    }

    /// The timer of a waiting transfer, due when the journal says.
    private func startRetryTimer(for record: TransferRecord) {
        startRetryTimer(
            record.transferId, after: .seconds(max(0, record.retryAt?.timeIntervalSinceNow ?? 0)), forNetwork: record.waitsForNetwork
        )
    }

    private func retryTimerEnded(_ id: Int64, holder: Holder, elapsed: Bool) async {
        release(id, holder)
        if elapsed {
            // Back into the queue; its id keeps its place among the others.
            _ = try? await store.apply(.resume, to: id)
        }
        await deletePartFileIfAbandoned(id)
        await schedule()
    }

    /// Deletes the part file of a cancelled or removed transfer once nothing holds it.
    private func deletePartFileIfAbandoned(_ id: Int64) async {
        guard holders.withLock({ $0[id] == nil }) else { return }
        let record = try? await journal.transfer(id: id)
        if record == nil || (record?.state == .cancelled && record?.keepsPartFile == false) {
            try? FileManager.default.removeItem(at: library.partURL(for: id))
        }
    }

    // MARK: - Recovery

    /// Requeues what was running, finishes moves a crash interrupted, restarts retry timers,
    /// deletes part files nobody owns and settles how much of the others to trust.
    private func recover() async throws {
        try FileManager.default.createDirectory(at: library.partials, withIntermediateDirectories: true)
        for record in try await journal.recoverInterruptedTransfers() {
            await finishInterruptedMove(record)
        }
        for record in try await journal.transfers(states: [.waiting]) {
            startRetryTimer(for: record)
        }
        try await deleteOrphanPartFiles()
        try await settlePartFileTails()
    }

    /// Journals as durable what each part file can be trusted with (``PartFileTail``): all of it
    /// if the machine has not restarted since the last daemon (after an fsync), else only its
    /// checkpointed bytes, cutting every part file back to them before this boot is recorded.
    private func settlePartFileTails() async throws {
        let boot = configuration.bootID
        let lastBoot = try await journal.lastBoot()
        let sameBoot = boot != nil && lastBoot == boot
        let unfinished: Set<TransferState> = [.queued, .paused, .waiting, .failed, .cancelled]
        for record in try await journal.transfers(states: unfinished) where record.kind == .download {
            let url = library.partURL(for: record.transferId)
            var info = stat()
            guard stat(url.path, &info) == 0 else { continue }
            let length = Int64(info.st_size)
            let trusted = PartFileTail.trusted(
                fileLength: length, journaled: record.durableBytes, total: record.totalBytes, sameBoot: sameBoot
            )
            if trusted != length || trusted != record.durableBytes {
                try await BlockingIO.run { () throws(FerryError) in
                    let part = try PartFile(url: url)
                    defer { part.close() }
                    try part.truncate(to: trusted)
                    try part.sync()
                }
            }
            if trusted != record.durableBytes {
                _ = try await store.update(id: record.transferId) { record in
                    record.durableBytes = trusted
                    return nil
                }
            }
        }
        if let boot { try await journal.recordBoot(boot) }
    }

    /// A transfer whose final name was journaled but which is not completed: the process died
    /// during the move into the library.
    private func finishInterruptedMove(_ record: TransferRecord) async {
        let id = record.transferId
        guard let relative = record.relativePath, let sha256 = record.sha256 else { return }
        let part = library.partURL(for: id)
        let target = library.absolute(relative)
        let fm = FileManager.default
        let partExists = fm.fileExists(atPath: part.path)
        let targetExists = fm.fileExists(atPath: target.path)
        var moved = false
        if partExists, targetExists, sameFile(part, target) {
            try? fm.removeItem(at: part)
            moved = true
        } else if partExists, !targetExists {
            moved = link(part.path, target.path) == 0 && unlink(part.path) == 0
        } else if !partExists, targetExists, (try? fm.attributesOfItem(atPath: target.path)[.size] as? Int64) == record.totalBytes {
            moved = true
        }
        let library = library
        if moved {
            logger.info("finished an interrupted move", metadata: ["transfer.id": "\(id)"])
            _ = try? await store.update(id: id) { record in
                record.state = .completed
                record.completedAt = Date()
                var event = record.event(.completed)
                event.path = library.absolutePath(relative)
                event.sha256 = sha256
                return event
            }
        } else {
            // Run it again: it resumes from the part file, or starts over.
            _ = try? await store.update(id: id) { record in
                record.fileName = nil
                record.sha256 = nil
                if !partExists { record.durableBytes = 0 }
                return nil
            }
        }
    }

    private nonisolated func sameFile(_ a: URL, _ b: URL) -> Bool {
        var sa = stat(), sb = stat()
        return stat(a.path, &sa) == 0 && stat(b.path, &sb) == 0 && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev
    }

    private func deleteOrphanPartFiles() async throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: library.partials.path)) ?? []
        for name in names {
            let url = library.partials.appendingPathComponent(name)
            guard name.hasSuffix(".part"), let id = Int64(name.dropLast(5)) else {
                try? FileManager.default.removeItem(at: url)
                continue
            }
            let record = try await journal.transfer(id: id)
            let keep = record.map { !$0.state.isFinal || $0.state == .failed || $0.keepsPartFile } ?? false
            if !keep { try? FileManager.default.removeItem(at: url) }
        }
    }
}
