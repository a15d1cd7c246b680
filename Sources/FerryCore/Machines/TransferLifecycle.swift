import FerryModel

/// A transfer's lifecycle as a table: a command and the current state give the next state and
/// its effects. ``TransferControl`` is its only user: commands from people (pause, resume,
/// cancel), reports of workers (start, wait, fail, complete) and timers (retry) all go through
/// it, so a late worker report can never undo a pause or a cancel.
package enum TransferLifecycle {
    package enum Command: String, Sendable, CaseIterable {
        /// The scheduler gave the transfer a slot.
        case start
        case pause
        case resume
        case cancel
        /// A failure that waiting can mend; the transfer tries again later.
        case wait
        /// A failure that waiting cannot mend, or the retry limit or resource timeout reached.
        case fail
        case complete
        /// A waiting transfer's time (or the network) has come: back into the queue.
        case retry
        /// A running transfer lost its worker without a report: the daemon stopped, or a command
        /// that stopped the worker could not be journaled. It goes back into the queue.
        case interrupt
        /// Resume data brings the transfer back: also a cancelled one that kept its part file.
        case reopen
    }

    package enum Effect: Sendable, Hashable {
        /// Tell the worker (or retry timer) holding the transfer to stop.
        case stopWorker
        /// Delete the part file, once no worker holds it.
        case deletePartFile
        /// Look for transfers to start.
        case schedule
    }

    package struct Transition: Sendable, Hashable {
        package var state: TransferState
        package var effects: [Effect]
        /// False when the command changed nothing (pausing a paused transfer).
        package var changed: Bool
    }

    /// - Parameter finishing: the transfer's final name is journaled and its file is being moved
    ///   into the library; only the worker's own report (complete, wait, fail) may follow.
    package static func transition(
        from state: TransferState, on command: Command, finishing: Bool = false
    ) throws(FerryError) -> Transition {
        if finishing, state == .running, [.pause, .cancel].contains(command) {
            throw FerryError.invalidState("The transfer is being moved into the library; it is about to complete.")
        }
        func to(_ next: TransferState, _ effects: Effect...) -> Transition {
            Transition(state: next, effects: effects, changed: true)
        }
        let same = Transition(state: state, effects: [], changed: false)

        switch (state, command) {
        case (.queued, .start): return to(.running)
        case (.queued, .pause): return to(.paused)
        case (.running, .pause), (.waiting, .pause): return to(.paused, .stopWorker, .schedule)
        case (.paused, .resume), (.failed, .resume): return to(.queued, .schedule)
        // Resuming a waiting transfer: try now.
        case (.waiting, .resume), (.waiting, .retry): return to(.queued, .stopWorker, .schedule)
        case (.queued, .cancel), (.paused, .cancel), (.failed, .cancel): return to(.cancelled, .deletePartFile)
        case (.running, .cancel), (.waiting, .cancel): return to(.cancelled, .stopWorker, .deletePartFile, .schedule)
        case (.running, .wait): return to(.waiting, .schedule)
        case (.running, .fail), (.waiting, .fail): return to(.failed, .schedule)
        case (.running, .complete): return to(.completed, .schedule)
        case (.running, .interrupt): return to(.queued, .schedule)
        case (.paused, .reopen), (.failed, .reopen), (.cancelled, .reopen): return to(.queued, .schedule)

        case (.paused, .pause), (.queued, .resume), (.running, .resume), (.cancelled, .cancel),
            (.queued, .reopen), (.running, .reopen), (.waiting, .reopen), (.completed, .reopen):
            return same
        default:
            throw FerryError.invalidState("The transfer is \(state.rawValue); it cannot \(verb(command)).")
        }
    }

    private static func verb(_ command: Command) -> String {
        switch command {
        case .start: "start"
        case .pause: "be paused"
        case .resume: "be resumed"
        case .cancel: "be cancelled"
        case .wait: "wait"
        case .fail: "fail"
        case .complete: "complete"
        case .retry: "retry"
        case .interrupt: "be interrupted"
        case .reopen: "be reopened"
        }
    }
}
