import FerryModel
import Foundation

/// The executor: every input goes to the ``TransferControl``, and the actions it returns are
/// carried out here, in order.
extension TransferEngine {
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
        var written: TransferRecord?
        for action in actions {
            switch action {
            case .journal(let id, let change):
                do {
                    let record = try await store.write(change, to: id)
                    if id == commanded { written = record }
                } catch let error as FerryError where error.code == .leaseLost {
                    // Another member took the transfer: this one stops working on it.
                    logger.warning("a transfer's claim was lost", metadata: ["transfer.id": "\(id)", "error": "\(error.message)"])
                    await input(.lost(id))
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
            case .runCommand(let token):
                commandTurns.removeValue(forKey: token)?.fire()
            case .claim(let limit, let sessions, let paused, let excluding):
                await claim(limit: limit, sessions: sessions, paused: paused, excluding: excluding)
            case .releaseLease(let id):
                await leases?.release(id)
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
        }
        return written
    }

    func retryDue(_ id: Int64, _ token: Int) async {
        if control.entry(id)?.timer == token { timers[id] = nil }
        await input(.retryDue(id, timer: token))
    }
}
