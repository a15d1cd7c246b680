import FerryKit

/// Fails an attempt that goes `limit` without moving a byte (a stalled server), separately from
/// the HTTP client's read timeout, so that each session and transfer can have its own.
enum IdleWatchdog {
    /// Runs `operation`; if `bytes()` stays the same for `limit`, cancels it and throws a
    /// `timeout` error instead.
    static func run<T: Sendable>(
        limit: Duration?, bytes: @escaping @Sendable () -> Int64, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard let limit else { return try await operation() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                var last = bytes()
                var quietSince = ContinuousClock.now
                while true {
                    try await Task.sleep(for: limit / 4)
                    let now = bytes()
                    if now != last {
                        last = now
                        quietSince = .now
                    } else if quietSince.duration(to: .now) >= limit {
                        return nil
                    }
                }
            }
            defer { group.cancelAll() }
            guard let value = try await group.next()! else {
                let seconds = (limit / .milliseconds(100)).rounded() / 10
                throw FerryError(.timeout, "No data moved for \(seconds) s; the server stalled.")
            }
            return value
        }
    }
}
