import FerryModel
import Foundation

/// A change of a transfer's state that ``TransferControl`` decided and the journal is to record,
/// with its event. The control owns the state; the journal is its durable copy.
package enum TransferChange: Sendable, Hashable {
    /// Running: one more attempt. Journaled by the worker's job just before the worker runs.
    case started
    case paused
    /// Back in the queue, keeping its place (its id).
    case queued(Requeue)
    case cancelled(keepsPartFile: Bool)
    case waiting(Wait)
    case failed(Failure)
    /// `path`: the file in the library (for an upload, the file sent).
    case completed(path: String?, sha256: String?)
    /// The row is deleted, with a `removed` event.
    case removed
    /// Its place in the queue changed (no event: its state did not).
    case reordered(priority: Int, rank: Int64?)

    package enum Requeue: Sendable, Hashable {
        /// A person resumed it: the count of failures starts again.
        case resumed
        /// Resumed to start no earlier than the date.
        case resumedAfter(Date)
        /// A waiting transfer's time, or the network, came.
        case retry
        /// Its worker was lost (the daemon stopped, or a command could not be journaled).
        case interrupted
        /// Resume data brought it back.
        case reopened
    }

    package struct Wait: Sendable, Hashable {
        package var failures: Int
        package var waitingSince: Date
        package var retryAt: Date
        package var reason: String
        package var forNetwork: Bool
        package var error: TransferErrorInfo
    }

    package struct Failure: Sendable, Hashable {
        package var failures: Int
        package var waitingSince: Date?
        package var error: TransferErrorInfo
    }
}

extension TransferStore {
    /// Journals a change in one transaction and returns the record as written.
    @discardableResult
    func write(_ change: TransferChange, to id: Int64) async throws -> TransferRecord? {
        if case .removed = change {
            _ = try await journal.removeTransfer(id: id)
            return nil
        }
        return try await journal.update(id: id) { record in ((), record.apply(change)) }.record
    }
}

extension TransferRecord {
    /// Applies `change` and returns the event it journals.
    mutating func apply(_ change: TransferChange) -> TransferEvent? {
        switch change {
        case .started:
            // A cancel or pause the control journaled between deciding the start and the worker
            // writing it stands: the worker sees the row is not running and does not run.
            guard [.queued, .waiting, .running].contains(state) else { return nil }
            state = .running
            attempts += 1
            retryAt = nil
            return nil
        case .paused:
            state = .paused
            return event(.paused)
        case .queued(let why):
            state = .queued
            retryAt = nil
            switch why {
            case .resumed, .reopened, .resumedAfter:
                if case .resumedAfter(let date) = why { startAfter = date }
                error = nil
                failures = 0
                waitReason = nil
                waitingSince = nil
                waitsForNetwork = false
                if why == .reopened { keepsPartFile = false }
            case .retry, .interrupted:
                break
            }
            return nil
        case .cancelled(let keeps):
            state = .cancelled
            keepsPartFile = keeps
            retryAt = nil
            return event(.cancelled)
        case .waiting(let wait):
            state = .waiting
            notFinishing()
            failures = wait.failures
            waitingSince = wait.waitingSince
            retryAt = wait.retryAt
            waitReason = wait.reason
            waitsForNetwork = wait.forNetwork
            error = wait.error
            var event = event(.waiting)
            event.attempt = attempts
            event.retryAt = retryAt
            event.error = wait.error
            event.reason = wait.reason
            return event
        case .failed(let failure):
            state = .failed
            notFinishing()
            failures = failure.failures
            waitingSince = failure.waitingSince
            retryAt = nil
            waitReason = nil
            waitsForNetwork = false
            error = failure.error
            var event = event(.failed)
            event.error = failure.error
            return event
        case .completed(let path, let sha256):
            state = .completed
            completedAt = Date()
            error = nil
            failures = 0
            if let sha256 { self.sha256 = sha256 }
            var event = event(.completed)
            event.path = path
            event.sha256 = self.sha256
            return event
        case .removed:
            return nil
        case .reordered(let priority, let rank):
            self.priority = priority
            queueRank = rank
            return nil
        }
    }

    /// A failed move into the library is not finishing any more.
    private mutating func notFinishing() {
        fileName = nil
        sha256 = nil
    }
}
