import Synchronization

/// Runs identical requests once: a caller asking for a key that is already being fetched
/// waits for that fetch instead of starting another.
///
/// The fetch runs in a task of its own, not the first caller's, because the callers come and
/// go independently: one that leaves (cancelled, or replaced by a newer search) returns at
/// once with `CancellationError` while the others keep waiting; when the last one leaves, the
/// fetch is cancelled, which stops its HTTP request.
final class RequestCoalescer<Value: Sendable>: Sendable {
    private struct Flight {
        var id: Int
        var task: Task<Void, Never>?
        var waiters: [Int: CheckedContinuation<Value, any Error>]
    }

    private struct State {
        var flights: [String: Flight] = [:]
        var nextID = 0
    }

    private enum Joined { case cancelled, joined, started(Int) }

    private let state = Mutex(State())

    init() {}

    /// The value of the fetch in flight for `key`, or of a new one running `fetch`.
    func value(for key: String, fetch: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let waiter = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let joined = state.withLock { state -> Joined in
                    // Checked under the lock that `leave` takes, so a cancellation is seen either here or there.
                    if Task.isCancelled { return .cancelled }
                    if state.flights[key] != nil {
                        state.flights[key]!.waiters[waiter] = continuation
                        return .joined
                    }
                    state.nextID += 1
                    state.flights[key] = Flight(id: state.nextID, waiters: [waiter: continuation])
                    return .started(state.nextID)
                }
                switch joined {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .joined: break
                case .started(let id): start(key, id, fetch)
                }
            }
        } onCancel: {
            leave(key, waiter)
        }
    }

    /// Callers waiting for `key` now (for tests).
    func waiters(for key: String) -> Int { state.withLock { $0.flights[key]?.waiters.count ?? 0 } }

    private func start(_ key: String, _ id: Int, _ fetch: @escaping @Sendable () async throws -> Value) {
        let task = Task {
            let result: Result<Value, any Error>
            do { result = .success(try await fetch()) } catch { result = .failure(error) }
            finish(key, id, result)
        }
        let abandoned = state.withLock { state in
            guard state.flights[key]?.id == id else { return true }
            state.flights[key]!.task = task
            return false
        }
        // Everyone left before the task was stored: no one will cancel it otherwise.
        if abandoned { task.cancel() }
    }

    private func leave(_ key: String, _ waiter: Int) {
        let (continuation, orphan) = state.withLock { state -> (CheckedContinuation<Value, any Error>?, Task<Void, Never>?) in
            guard var flight = state.flights[key], let continuation = flight.waiters.removeValue(forKey: waiter) else {
                return (nil, nil)
            }
            if flight.waiters.isEmpty {
                state.flights[key] = nil
                return (continuation, flight.task)
            }
            state.flights[key] = flight
            return (continuation, nil)
        }
        continuation?.resume(throwing: CancellationError())
        orphan?.cancel()
    }

    private func finish(_ key: String, _ id: Int, _ result: Result<Value, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard let flight = state.flights[key], flight.id == id else { return [] }
            state.flights[key] = nil
            return Array(flight.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}
