import Synchronization

/// "The machine's network changed" (a link came up, an address or a route was added), told by the
/// ``NetworkWatcher`` and heard by every transfer waiting for the network and every running one
/// whose connection went quiet. Each change bumps a generation; a waiter passes the generation it
/// has seen and returns once a later one exists, so a change between two waits is never missed.
public final class NetworkChanges: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextKey = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// The current generation, to wait for a change after it.
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// A change happened: wakes every waiter.
    public func changed() {
        let waiters = state.withLock { state in
            state.generation += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the generation is past `seen`, or when the calling task is cancelled.
    public func wait(after seen: UInt64) async {
        let key = state.withLock { state -> Int in
            defer { state.nextKey += 1 }
            return state.nextKey
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.generation > seen || Task.isCancelled { return true }
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
}
