import Synchronization

/// A one-shot "stop now" for the task that holds a transfer (a download or a retry timer).
/// Firing it wakes every waiter; it cannot be reset.
final class StopSignal: Sendable {
    private struct State {
        var fired = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextKey = 0
    }

    private let state = Mutex(State())

    init() {}

    var isFired: Bool { state.withLock { $0.fired } }

    func fire() {
        let waiters = state.withLock { state in
            state.fired = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when fired, or when the calling task is cancelled.
    func wait() async {
        let key = state.withLock { state -> Int in
            defer { state.nextKey += 1 }
            return state.nextKey
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.fired || Task.isCancelled { return true }
                    state.waiters[key] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: key) }
            waiter?.resume()
        }
    }

    /// Runs `operation` until it finishes or the signal fires, whichever is first; on a stop the
    /// operation's task is cancelled and awaited.
    /// - Returns: the operation's result, or nil if the signal fired first.
    func race<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T? {
        if isFired { return nil }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                await self.wait()
                return nil
            }
            defer { group.cancelAll() }
            // The first to finish decides; the other is cancelled by the defer.
            let first = try await group.next()!
            if first == nil, !isFired { return try await group.next()! }
            return first
        }
    }

    /// Sleeps on `clock`, waking early if the signal fires, or if `wake` returns first.
    /// - Returns: true if the full time passed or `wake` returned; false if the signal fired.
    func sleep(for duration: Duration, clock: any Clock<Duration>, orUntil wake: (@Sendable () async -> Void)? = nil) async -> Bool {
        (try? await race {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await clock.sleep(for: duration, tolerance: nil) }
                if let wake { group.addTask { await wake() } }
                defer { group.cancelAll() }
                try await group.next()
            }
            return true
        }) == true
    }
}
