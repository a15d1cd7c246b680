import FerryCore
import FerryKit
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Tells the world when a transfer ends, so nobody has to watch it: the session's (else the
/// daemon's) hook command (``HookCommand``), its webhook (``Webhook``) and a desktop
/// notification (``DesktopNotification``). It hears of `completed` and `failed` events as the
/// journal commits them and works beside the engine: whatever a hook does, the transfer stays
/// as it is.
package struct TransferAnnouncer: Service {
    let journal: any TransferJournal
    let library: LibraryFolder
    let clients: HTTPClients
    let hub: EventHub
    let launches = Launches()
    /// False (`ferry serve --no-hooks`): no hook command or session program runs.
    let runsCommands: Bool
    /// The desktop's session bus, for notifications (nil: none).
    let desktopBus: String?
    let events: AsyncStream<TransferEvent>
    let hookTimeout: Duration
    let webhookDelays: [Duration]
    let logger: Logger

    /// - Parameters:
    ///   - hookTimeout: a hook still running after this is killed, with what it started.
    ///   - webhookDelays: pauses between a webhook's attempts.
    package init(
        engine: TransferEngine, runsCommands: Bool = true, desktopBus: String? = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"],
        hookTimeout: Duration = .seconds(60),
        webhookDelays: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16)], logger: Logger
    ) {
        journal = engine.journal
        library = engine.library
        clients = engine.clients
        hub = engine.hub
        self.runsCommands = runsCommands
        self.desktopBus = desktopBus
        self.hookTimeout = hookTimeout
        self.webhookDelays = webhookDelays
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: TransferEvent.self)
        // Called on the journal's writer after each commit: only a filter and a hand-over.
        journal.onCommit { event in
            if event.kind == .completed || event.kind == .failed { continuation.yield(event) }
        }
        events = stream
    }

    package func run() async {
        await withDiscardingTaskGroup { group in
            for await event in events.cancelOnGracefulShutdown() {
                group.addTask { await announce(event) }
            }
            // Shutting down: hooks still running are killed (see HookCommand).
            group.cancelAll()
        }
    }

    /// Everything the session asked for when `event`'s transfer ended.
    func announce(_ event: TransferEvent) async {
        guard let record = try? await journal.transfer(id: event.transferId) else { return }  // removed since
        let options = ((try? await journal.daemonOptions()) ?? TransferOptions())
            .overridden(by: (try? await journal.sessionOptions(record.session)) ?? TransferOptions())
        let transfer = record.model(library: library)
        var tagged = logger
        tagged[metadataKey: "transfer.id"] = "\(record.transferId)"
        let logger = tagged
        let command = runsCommands ? (event.kind == .completed ? options.onComplete : options.onFail) : nil
        await withDiscardingTaskGroup { group in
            if let command {
                group.addTask {
                    let hook = HookCommand(command: command, environment: Self.environment(transfer), timeout: hookTimeout)
                    let status = await hook.run(logger: logger)
                    logger.info("hook ended", metadata: ["hook.status": "\(status.map(String.init) ?? "not run")"])
                }
            }
            if let text = options.notifyURL, let url = URL(string: text) {
                group.addTask {
                    let webhook = Webhook(url: url, delays: webhookDelays)
                    await webhook.deliver(.init(event: event.kind, transfer: transfer), client: clients.client(for: url), logger: logger)
                }
            }
            if options.desktopNotify == true {
                group.addTask { await DesktopNotification(transfer).show(bus: desktopBus, logger: logger) }
            }
        }
        // The session's own program, as iOS relaunches an app: only the session's option counts.
        if runsCommands, let program = try? await journal.sessionOptions(record.session).launch, let seq = event.seq {
            await launch(program, session: record.session, seq: seq, logger: logger)
        }
    }

    /// Starts the session's program when nobody listens to the session and it has not been
    /// started for this event already; one at a time per session. An event that finds a
    /// listener, or the program running, is not lost: one call waits until neither is there (a
    /// program that has just exited may still be listed as listening for a moment), then starts
    /// the program for the newest such event, unless the session has acknowledged it by then.
    func launch(_ program: [String], session: String, seq: Int64, logger: Logger) async {
        var seq = seq
        while true {
            switch launches.claim(session, through: seq, listened: hub.hasListener(session: session)) {
            case .covered, .missed(watching: false):
                return
            case .start:
                logger.info("launching the session's program", metadata: ["session": "\(session)", "program": "\(program[0])"])
                let run = HookCommand(arguments: program, environment: ["FERRY_SESSION": session], timeout: nil)
                let status = await run.run(logger: logger)
                launches.ended(session)
                logger.info("the session's program ended", metadata: ["session": "\(session)", "status": "\(status.map(String.init) ?? "not run")"])
                return
            case .missed(watching: true):
                while hub.hasListener(session: session) || launches.isRunning(session) {
                    // A listener that acknowledges what was missed has had it.
                    let acknowledged = (try? await journal.acknowledgedSeq(session: session)) ?? 0
                    if launches.dropMissed(session, upTo: acknowledged) { return }
                    do {
                        try await Task.sleep(for: .milliseconds(500))
                    } catch {
                        launches.dropMissed(session)  // shutting down
                        return
                    }
                }
                guard let missed = launches.takeMissed(session) else { return }
                if let acknowledged = try? await journal.acknowledgedSeq(session: session), acknowledged >= missed { return }
                seq = missed
            }
        }
    }

    /// Which sessions' programs run, the newest event each was started for, and the newest
    /// each missed (a listener there, or the program running) with whether a call waits on it.
    final class Launches: Sendable {
        enum Claim: Equatable {
            /// Start it (it is now counted as running).
            case start
            /// Started for this event or a later one already.
            case covered
            /// Not now; `watching`: this call is the one to wait and start it later.
            case missed(watching: Bool)
        }

        private struct State {
            var running: Set<String> = []
            var through: [String: Int64] = [:]
            var missed: [String: Int64] = [:]
            var watching: Set<String> = []
        }

        private let state = Mutex(State())

        func claim(_ session: String, through seq: Int64, listened: Bool) -> Claim {
            state.withLock { state in
                guard seq > state.through[session, default: 0] else { return .covered }
                guard !listened, !state.running.contains(session) else {
                    state.missed[session] = max(state.missed[session] ?? 0, seq)
                    return .missed(watching: state.watching.insert(session).inserted)
                }
                state.running.insert(session)
                state.through[session] = seq
                return .start
            }
        }

        func ended(_ session: String) {
            _ = state.withLock { $0.running.remove(session) }
        }

        func isRunning(_ session: String) -> Bool {
            state.withLock { $0.running.contains(session) }
        }

        /// The newest missed event, handed to the waiting call (which waits no more).
        func takeMissed(_ session: String) -> Int64? {
            state.withLock { state in
                state.watching.remove(session)
                return state.missed.removeValue(forKey: session)
            }
        }

        /// Forgets what was missed, if it is no newer than `seq` (all of it without one).
        /// - Returns: whether it is forgotten (and nobody waits on it).
        @discardableResult
        func dropMissed(_ session: String, upTo seq: Int64 = .max) -> Bool {
            state.withLock { state in
                guard state.missed[session, default: 0] <= seq else { return false }
                state.missed.removeValue(forKey: session)
                state.watching.remove(session)
                return true
            }
        }
    }

    /// What a hook learns of the transfer.
    static func environment(_ transfer: Transfer) -> [String: String] {
        // Each one set, empty when unknown: none comes from the daemon's own environment.
        [
            "FERRY_ID": String(transfer.id), "FERRY_URL": transfer.url, "FERRY_STATE": transfer.state.rawValue,
            "FERRY_SESSION": transfer.session, "FERRY_PATH": transfer.path ?? transfer.sourcePath ?? "",
            "FERRY_SHA256": transfer.sha256 ?? "", "FERRY_ERROR": transfer.error?.message ?? "",
        ]
    }
}
