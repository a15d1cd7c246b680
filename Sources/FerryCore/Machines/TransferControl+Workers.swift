import FerryModel
import Foundation

extension TransferControl {
    /// At start: the move into the library that a crash interrupted is finished.
    mutating func recoveredMove(_ id: Int64, path: String?, sha256: String?) -> [Action] {
        guard entries[id]?.worker == nil else { return [] }
        let actions = change(id, .complete, .completed(path: path, sha256: sha256))
        settle(id)
        return actions
    }

    /// The worker is about to move the file into the library: from now only its report may follow.
    mutating func finishing(_ id: Int64, worker: Int) throws(FerryError) -> [Action] {
        guard entries[id]?.worker == worker, entries[id]?.state == .running else {
            throw FerryError.invalidState("The transfer is no longer running.")
        }
        entries[id]?.finishing = true
        return []
    }

    /// A waiting transfer's timer: back into the queue (a stale timer changes nothing).
    mutating func retryDue(_ id: Int64, timer: Int, now: Date) -> [Action] {
        guard entries[id]?.timer == timer else { return [] }
        entries[id]?.timer = nil
        guard entries[id]?.state == .waiting else { return schedule(now: now) }
        return change(id, .retry, .queued(.retry)) + schedule(now: now)
    }

    /// Transfers waiting for the network try now.
    mutating func networkBack(now: Date) -> [Action] {
        var actions: [Action] = []
        for (id, _) in entries.sorted(mayRest: false, where: { $0.state == .waiting && $0.waitsForNetwork }) {
            actions += change(id, .retry, .queued(.retry))
        }
        return actions + schedule(now: now)
    }


    mutating func workerEnded(_ id: Int64, worker: Int, _ report: WorkerReport, now: Date) -> [Action] {
        guard var entry = entries[id], entry.worker == worker else {
            // The worker of a lost claim let go: the claim goes now.
            if entries[id] == nil, releasing.remove(id) != nil { return [.releaseLease(id)] }
            return []
        }
        let restarting = entry.restarting
        entry.worker = nil
        entry.finishing = false
        entry.restarting = false
        entries[id] = entry
        var actions: [Action] = []
        if entry.state == .running, !entry.removed {
            // The worker's own outcome: nothing else changed the transfer meanwhile.
            switch report {
            case .completed(let path, let sha256):
                actions += change(id, .complete, .completed(path: path, sha256: sha256))
            case .failed(let attempt) where !isShutDown:
                actions += failed(id, attempt, now: now)
            case .stopped where !isShutDown && restarting:
                // Stopped to start again with its new options: back into the queue, at its place.
                actions += change(id, .interrupt, .queued(.interrupted))
            case .stopped where !isShutDown:
                // Not asked to stop: its start could not be journaled. Back into the queue, and
                // not started again for a second, so that a failing journal is not a busy loop.
                entries[id]?.startAfter = max(entry.startAfter ?? now, now.addingTimeInterval(1))
                actions += change(id, .interrupt, .queued(.interrupted))
            case .failed, .stopped:
                break  // Cut by the shutdown: the next start puts it back into the queue.
            }
        }
        settle(id)
        return actions + schedule(now: now)
    }

    /// Waits (if waiting can mend it and the resource timeout allows) or fails.
    mutating func failed(_ id: Int64, _ attempt: AttemptReport, now: Date) -> [Action] {
        guard var entry = entries[id] else { return [] }
        let failure = attempt.failure
        entry.failures = attempt.progressed ? 1 : entry.failures + 1
        if attempt.progressed || entry.waitingSince == nil { entry.waitingSince = now }
        let since = entry.waitingSince ?? now
        let waited = Duration.seconds(now.timeIntervalSince(since))
        let delay = failure.retryable
            ? attempt.policy.delay(afterFailures: entry.failures, retryAfter: failure.retryAfter, unit: attempt.unit, waited: waited) : nil
        if let delay {
            entry.retryAt = now.addingTimeInterval(delay / .seconds(1))
            entry.waitsForNetwork = failure.waitsForNetwork
            entries[id] = entry
            let wait = TransferChange.Wait(
                failures: entry.failures, waitingSince: since, retryAt: entry.retryAt!, reason: failure.reason,
                forNetwork: failure.waitsForNetwork, error: failure.error.info
            )
            var actions = change(id, .wait, .waiting(wait))
            if !isShutDown { actions.append(armTimer(id, after: delay)) }
            return actions
        }
        entry.retryAt = nil
        entry.waitsForNetwork = false
        entries[id] = entry
        let error = TransferErrorInfo(
            code: failure.error.code.rawValue,
            message: Self.giveUp(failure, failures: entry.failures, waited: waited, policy: attempt.policy)
        )
        return change(id, .fail, .failed(.init(failures: entry.failures, waitingSince: entry.waitingSince, error: error)))
    }

    /// Why a transfer stops trying: the failure itself, or the limit that ended the waiting.
    static func giveUp(_ failure: AttemptFailure, failures: Int, waited: Duration, policy: RetryPolicy) -> String {
        guard failure.retryable else { return failure.error.message }
        if let maxAttempts = policy.maxAttempts, failures >= maxAttempts {
            return "Gave up after \(failures) failed attempts. Last error: \(failure.error.message)"
        }
        if let retryAfter = failure.retryAfter, retryAfter > policy.maxRetryAfter {
            return "The server asks to wait \(DurationText.describe(retryAfter)), longer than Ferry waits (\(DurationText.describe(policy.maxRetryAfter))). \(failure.error.message)"
        }
        return "Gave up after \(DurationText.describe(waited)) without progress (the resource timeout is \(DurationText.describe(policy.resourceTimeout))). Last error: \(failure.error.message)"
    }
}
