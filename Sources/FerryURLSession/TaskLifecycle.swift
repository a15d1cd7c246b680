/// What `resume()`, `suspend()`, `cancel()` and the end of the work do to a task's state, and
/// what the transport must do about it: Apple's rules, kept apart from the I/O so they can be
/// read and tested on their own.
///
/// A task starts suspended and does nothing until its first `resume()`. Suspending a running
/// task pauses it (the transport stops reading; the connection may stay); cancelling a task that
/// has not ended stops it, and it ends with `URLError.cancelled`. Calls that make no sense in the
/// current state (resuming a running task, anything on a completed one) do nothing, as on Apple's
/// platforms.
struct TaskLifecycle: Equatable, Sendable {
    enum Action: Equatable, Sendable {
        /// Nothing to do.
        case none
        /// Begin the work (the first `resume()`).
        case start
        /// Stop reading until ``unpause``.
        case pause
        case unpause
        /// Stop the work; it ends as cancelled. `started`: whether work was begun at all (a task
        /// cancelled before its first `resume()` still reports its end, with nothing to stop).
        case stop(started: Bool)
    }

    private(set) var state: URLSessionTask.State = .suspended
    private(set) var started = false

    /// A new task: suspended, not started.
    init() {}

    /// A background task an earlier run of the program made and resumed: the daemon runs it
    /// (or holds it, `suspended`).
    init(adopted state: URLSessionTask.State) {
        self.state = state
        started = true
    }

    mutating func resume() -> Action {
        guard state == .suspended else { return .none }
        state = .running
        if started { return .unpause }
        started = true
        return .start
    }

    mutating func suspend() -> Action {
        guard state == .running else { return .none }
        state = .suspended
        return .pause
    }

    mutating func cancel() -> Action {
        guard state == .running || state == .suspended else { return .none }
        state = .canceling
        return .stop(started: started)
    }

    /// The work ended (finished, failed or stopped). Returns false when it had already ended:
    /// the end is reported once.
    mutating func finish() -> Bool {
        guard state != .completed else { return false }
        state = .completed
        return true
    }
}
