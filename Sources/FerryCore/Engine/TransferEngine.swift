import AsyncHTTPClient
import FerryModel
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The transfer engine: a ServiceLifecycle service that runs transfers from the journal, at
/// most `maxConcurrent` at once and the rest in order, with retries, checkpoints and graceful
/// shutdown. Every input (a command, a worker's report, a timer, the network) goes to the
/// ``TransferControl``, which decides; the engine carries out the actions it returns.
package actor TransferEngine: Service {
    package nonisolated let configuration: Configuration
    /// Transfers, their events and the sessions' settings: this machine's SQLite journal, or a
    /// cluster's PostgreSQL one.
    package nonisolated let journal: any TransferJournal
    /// This machine's own journal: its boots, aria2 names, and the listening data.
    package nonisolated let local: SQLiteJournal
    /// In a cluster, the shared queue's claims: only claimed transfers run here. Nil on one machine.
    package nonisolated let leases: (any TransferLeases)?
    package nonisolated let library: LibraryFolder
    package nonisolated let hub: EventHub
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
    package nonisolated let network: NetworkChanges
    /// Every outbound client: direct, and one per proxy in use.
    package nonisolated let clients: HTTPClients

    /// The one owner of every transfer's control; the engine carries out its actions.
    var control: TransferControl
    /// The workers running, by transfer id.
    var workers: [Int64: Worker] = [:]
    /// Retry timers, by transfer id.
    var timers: [Int64: Task<Void, Never>] = [:]
    /// Wakes the scheduler when the earliest scheduled transfer (`startAfter`) is due.
    var wake: Task<Void, Never>?
    /// Wakes at the next edge of a bandwidth schedule's window.
    var scheduleWake: Task<Void, Never>?
    /// What the start found of the journal (``JournalCheck``); nil before the start, or in a cluster.
    package var journalCheck: JournalCheck?
    /// What ``applySchedules(now:)`` last found the network to be.
    var meteredNow = false
    /// Commands waiting for their turn (``TransferControl/Action/runCommand(token:)``), by token.
    var commandTurns: [Int: StopSignal] = [:]
    var nextCommand = 0
    /// In a cluster: signalled when there may be work to claim (a transfer queued, a slot freed).
    nonisolated let claimWake = Broadcast()

    /// A worker holding a transfer: `stop` asks it to let go, `released` fires once it has (the
    /// part file checkpointed and closed, its report applied).
    final class Worker: Sendable {
        let token: Int
        let stop = StopSignal()
        let released = StopSignal()
        init(token: Int) { self.token = token }
    }

    private nonisolated let jobs: AsyncStream<(Int64, Worker)>
    nonisolated let jobsContinuation: AsyncStream<(Int64, Worker)>.Continuation
    /// Fired at graceful shutdown.
    nonisolated let shutdown = StopSignal()

    /// An engine whose requests all go out directly through `httpClient` unless a transfer's
    /// options name a proxy.
    package init(
        configuration: Configuration = Configuration(), journal: SQLiteJournal, library: LibraryFolder, httpClient: HTTPClient,
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
    package init(
        configuration: Configuration = Configuration(), journal: SQLiteJournal, library: LibraryFolder, clients: HTTPClients,
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
    package init(
        configuration: Configuration = Configuration(), journal: any TransferJournal, local: SQLiteJournal, leases: (any TransferLeases)?,
        library: LibraryFolder, clients: HTTPClients, hub: EventHub = EventHub(), clock: any Clock<Duration> = ContinuousClock(),
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
            fetcher: HTTPFetcher(
                clients: clients, redirects: configuration.redirects, userAgent: configuration.userAgent,
                cookies: SessionCookies(journal: journal, now: configuration.now), logger: logger
            ),
            progress: progress, bandwidth: bandwidth, network: network, hosts: hosts, configuration: configuration,
            random: random, logger: logger
        )
    }

    // MARK: - Service

    package func run() async throws {
        if leases == nil {
            try await recover()
        } else {
            try await joinCluster()
        }
        let options = try await journal.allSessionOptions()
        let limits = TransferControl.Limits(options: options, maxConcurrent: configuration.maxConcurrent, now: Date(), metered: await metered(options))
        if let options = try? await journal.daemonOptions() { clients.setDaemonOptions(options) }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.publishProgress() }
            group.addTask { await self.followNetwork() }
            group.addTask { await self.recheckMetered() }
            group.addTask { await self.pruneJournal() }
            await withGracefulShutdownHandler {
                // What the last run left goes back into the queue (or gets its timer), and what
                // is due starts; in a cluster, claims begin once the limits are known.
                await self.input(.started(limits))
                if let leases { group.addTask { await self.workThroughSharedQueue(leases) } }
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
        if leases == nil { try? await local.markStopped() }
        hub.close()
        await clients.shutdownProxied()
        logger.info("transfer engine stopped")
    }

    /// One worker's run: journal its start, run it, apply its report, let go.
    private nonisolated func perform(_ id: Int64, _ holder: Worker) async {
        let report: TransferControl.WorkerReport
        do {
            let record = try await store.write(.started, to: id)!
            let token = holder.token
            if record.state == .running, !holder.stop.isFired {
                report = await worker.run(record: record, signal: holder.stop) { await self.mayFinish(id, token) }
            } else {
                // Cancelled or paused before it began: the journal said no.
                report = .stopped
            }
        } catch {
            logger.error("cannot journal a transfer's start", metadata: ["transfer.id": "\(id)", "error": "\(error)"])
            report = .stopped
        }
        await workerEnded(id, holder, report)
    }

    private func workerEnded(_ id: Int64, _ holder: Worker, _ report: TransferControl.WorkerReport) async {
        await input(.workerEnded(id, worker: holder.token, report))
        if workers[id] === holder { workers[id] = nil }
        holder.released.fire()
        // A slot is free: in a cluster, perhaps one to claim.
        if leases != nil { claimWake.signal() }
    }

    /// Whether the worker may move the file into the library now: the control's answer (no pause
    /// or cancel came first).
    private func mayFinish(_ id: Int64, _ token: Int) async -> Bool {
        do {
            await execute(try control.handle(.finishing(id, worker: token), now: Date()))
            return true
        } catch {
            return false
        }
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
            // A route through another interface may be metered, or no longer.
            await applySchedules()
        }
    }

    /// Prunes the journal now, then every ``Configuration/eventPruneInterval``.
    private nonisolated func pruneJournal() async {
        repeat {
            await pruneJournalNow()
        } while await shutdown.sleep(for: configuration.eventPruneInterval, clock: ContinuousClock())
    }

    /// One pass: finished transfers beyond the history's retention, then events beyond their
    /// session's, go, and the journal gives the space back. "Now" is ``Configuration/now``.
    package nonisolated func pruneJournalNow() async {
        do {
            let history = configuration.historyRetention
            var removed = 0
            while !shutdown.isFired {
                let before = configuration.now().addingTimeInterval(-history.age)
                let batch = try await journal.removeHistory(before: before, keepingNewest: history.count, batch: 1000)
                // A cancelled transfer's part file kept for its resume data goes with it.
                for record in batch where record.state == .cancelled && record.keepsPartFile {
                    try? FileManager.default.removeItem(at: library.partURL(for: record))
                }
                removed += batch.count
                if batch.count < 1000 { break }
            }
            if removed > 0 { logger.info("removed finished transfers beyond the history's retention", metadata: ["transfers": "\(removed)"]) }
            let gone = try await journal.pruneEvents(configuration.eventRetention, now: configuration.now())
            if gone > 0 { logger.info("pruned events beyond their sessions' retention", metadata: ["events": "\(gone)"]) }
            try await journal.compact()
        } catch {
            logger.warning("cannot prune the journal", metadata: ["error": "\(error)"])
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

}

/// The journal's check at start: skipped after a clean stop, else SQLite's integrity check's verdict.
package enum JournalCheck: Sendable, Equatable {
    case skipped
    case intact
    case damaged([String])
}
