import FerryKit
import Foundation

/// When and how often to try again: exponential backoff with jitter on connection errors,
/// timeouts, 408, 429 and 5xx, honouring `Retry-After`; never on other statuses.
public struct RetryPolicy: Sendable {
    /// Consecutive failed attempts (without any new bytes) before the transfer fails.
    public var maxAttempts: Int
    public var baseDelay: Duration
    public var maxDelay: Duration
    /// The longest `Retry-After` Ferry waits for; longer requests fail the transfer.
    public var maxRetryAfter: Duration

    public init(
        maxAttempts: Int = 8, baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(120),
        maxRetryAfter: Duration = .seconds(3600)
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// Statuses worth another try (DESIGN: 408, 429 and 5xx): the server may answer
    /// differently later.
    public static func isRetryable(status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status)
    }

    /// The delay before attempt `failures + 1`, or nil when it is time to give up.
    /// - Parameters:
    ///   - failures: consecutive failed attempts so far (≥ 1).
    ///   - retryAfter: the server's `Retry-After`, if any.
    ///   - unit: a random number in 0..<1 (injected so tests are exact).
    public func delay(afterFailures failures: Int, retryAfter: Duration?, unit: Double) -> Duration? {
        guard failures < maxAttempts else { return nil }
        let failures = max(failures, 1)
        if let retryAfter {
            return retryAfter <= maxRetryAfter ? max(retryAfter, .zero) : nil
        }
        // "Equal jitter": half the exponential step for sure, the other half at random, so
        // clients that failed together do not come back together.
        let exponent = min(failures - 1, 30)
        let step = min(baseDelay * (1 << exponent), maxDelay)
        return step / 2 + step / 2 * unit
    }

    /// `Retry-After` as seconds or an HTTP date.
    public static func retryAfter(_ header: String?, now: Date) -> Duration? {
        guard let header = header?.trimmingWhitespace(), !header.isEmpty else { return nil }
        if let seconds = Int64(header), seconds >= 0 { return .seconds(seconds) }
        if let date = HTTPDate.parse(String(header)) { return .seconds(max(0, date.timeIntervalSince(now))) }
        return nil
    }
}
