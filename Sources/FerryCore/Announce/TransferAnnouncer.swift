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
public struct TransferAnnouncer: Service {
    let journal: any TransferJournal
    let library: Library
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
    public init(
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

    public func run() async {
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
        let transfer = record.model(library: library, live: nil)
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
    /// started for this event already; one at a time per session.
    func launch(_ program: [String], session: String, seq: Int64, logger: Logger) async {
        guard !hub.hasListener(session: session), launches.claim(session, through: seq) else { return }
        logger.info("launching the session's program", metadata: ["session": "\(session)", "program": "\(program[0])"])
        let run = HookCommand(arguments: program, environment: ["FERRY_SESSION": session], timeout: nil)
        let status = await run.run(logger: logger)
        launches.ended(session)
        logger.info("the session's program ended", metadata: ["session": "\(session)", "status": "\(status.map(String.init) ?? "not run")"])
    }

    /// Which sessions' programs run, and the newest event each was started for.
    final class Launches: Sendable {
        private let state = Mutex<(running: Set<String>, through: [String: Int64])>(([], [:]))

        /// True when `session`'s program may start for event `seq` (and it is now counted as
        /// running): none runs, and none was started for this event or a later one.
        func claim(_ session: String, through seq: Int64) -> Bool {
            state.withLock { state in
                guard !state.running.contains(session), seq > state.through[session, default: 0] else { return false }
                state.running.insert(session)
                state.through[session] = seq
                return true
            }
        }

        func ended(_ session: String) {
            _ = state.withLock { $0.running.remove(session) }
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
