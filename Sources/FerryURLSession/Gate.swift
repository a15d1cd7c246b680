import Synchronization

/// Where a suspended task's reading waits: open, it lets everyone through; closed, they wait
/// until it opens again.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((true, []))

    func close() {
        state.withLock { $0.open = false }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func pass() async {
        if state.withLock({ $0.open }) { return }
        await withCheckedContinuation { continuation in
            let passes = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if passes { continuation.resume() }
        }
    }
}

/// A completion handler handed to a delegate, answered once: Apple's raise an exception when
/// called twice; here a second answer is ignored.
final class Answer<Value: Sendable>: @unchecked Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    func callAsFunction(_ value: Value) {
        continuation.withLock { continuation in
            continuation?.resume(returning: value)
            continuation = nil
        }
    }
}
