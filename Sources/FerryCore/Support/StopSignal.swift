/// A one-shot "stop now" for a task (a transfer's worker, the engine's loops).
/// Firing it wakes every waiter; it cannot be reset.
package final class StopSignal: Sendable {
    private let broadcast = Broadcast()

    package init() {}

    package var isFired: Bool { broadcast.generation > 0 }

    package func fire() { broadcast.signal() }

    /// Returns when fired, or when the calling task is cancelled.
    package func wait() async {
        await broadcast.wait(after: 0)
    }

    /// Runs `operation` until it finishes or the signal fires, whichever is first; on a stop the
    /// operation's task is cancelled and awaited.
    /// - Returns: the operation's result, or nil if the signal fired first.
    package func race<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T? {
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

    /// Sleeps on `clock`, waking early if the signal fires.
    /// - Returns: true if the full time passed; false if the signal fired.
    func sleep(for duration: Duration, clock: any Clock<Duration>) async -> Bool {
        (try? await race {
            try await clock.sleep(for: duration, tolerance: nil)
            return true
        }) == true
    }
}
