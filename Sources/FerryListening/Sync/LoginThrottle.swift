import Foundation

/// Slows down guessing a sync password: each failed login from an address waits longer before
/// its answer (0.5 s, 1 s, 2 s … at most 8 s); a success, or ten quiet minutes, forgets them.
/// Pure: the caller sleeps.
package struct LoginThrottle: Sendable {
    private var failures: [String: (count: Int, last: Date)] = [:]
    /// Addresses remembered at most, so a flood of them cannot grow it without end.
    static let capacity = 10_000
    static let forgetAfter: TimeInterval = 600

    package init() {}

    /// Records a failed login from `address`; returns how long to wait before answering.
    package mutating func failed(from address: String, now: Date = Date()) -> Duration {
        let previous = failures[address].flatMap { now.timeIntervalSince($0.last) < Self.forgetAfter ? $0.count : nil } ?? 0
        if failures.count >= Self.capacity { failures = failures.filter { now.timeIntervalSince($0.value.last) < Self.forgetAfter } }
        failures[address] = (previous + 1, now)
        return Self.delay(afterFailures: previous + 1)
    }

    package mutating func succeeded(from address: String) {
        failures[address] = nil
    }

    /// 0.5 s after the first failure, doubling up to 8 s.
    static func delay(afterFailures count: Int) -> Duration {
        .milliseconds(500 * (1 << min(max(count - 1, 0), 4)))
    }
}
