import Synchronization

/// Waiters woken together each time it is signalled. Signals are counted (a generation), and a
/// waiter names the generation it has seen, so a signal between two waits is never missed. The
/// mechanism under ``StopSignal`` (signalled once) and ``NetworkChanges`` (at every change).
final class Broadcast: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextKey = 0
    }

    private let state = Mutex(State())

    /// Signals so far.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Wakes every waiter.
    func signal() {
        let waiters = state.withLock { state in
            state.generation += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the generation is past `seen`, or when the calling task is cancelled.
    func wait(after seen: UInt64) async {
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
