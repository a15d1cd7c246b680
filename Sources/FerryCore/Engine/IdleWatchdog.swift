import FerryModel

/// Ends an attempt whose connection went quiet: one that goes `limit` without moving a byte (a
/// stalled server; separate from the HTTP client's read timeout, so each session and transfer can
/// have its own), and one that moves nothing for a second after the machine's network changed (a
/// link or route came back: a fresh connection beats waiting out TCP's backoff on a dead one).
enum IdleWatchdog {
    /// How long a connection may stay quiet after a network change before it is replaced.
    static let quietAfterNetworkChange = Duration.seconds(1)

    /// Runs `operation`, watching `bytes()`.
    /// - Throws: `timeout` after `limit` without a byte; ``NetworkChangeStall`` after a quiet
    ///   second following a network change; or what `operation` throws.
    static func run<T: Sendable>(
        limit: Duration?, network: NetworkChanges? = nil, bytes: @escaping @Sendable () -> Int64,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        guard limit != nil || network != nil else { return try await operation() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            if let limit {
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
            }
            if let network {
                group.addTask {
                    var seen = network.generation
                    while true {
                        await network.wait(after: seen)
                        try Task.checkCancellation()
                        seen = network.generation
                        let before = bytes()
                        try await Task.sleep(for: quietAfterNetworkChange)
                        if bytes() == before { throw NetworkChangeStall() }
                    }
                }
            }
            defer { group.cancelAll() }
            guard let value = try await group.next()! else {
                let seconds = ((limit ?? .zero) / .milliseconds(100)).rounded() / 10
                throw FerryError(.timeout, "No data moved for \(seconds) s; the server stalled.")
            }
            return value
        }
    }
}
