import FerryModel
import Foundation

/// When to try again, and when to stop: exponential backoff with jitter, capped at a minute, on
/// failures that waiting can mend (no network, connection errors, timeouts, 408, 429, 5xx),
/// honouring `Retry-After`; never on the others. A transfer gives up only when it has gone its
/// resource timeout (7 days by default) without progress, or, if set, after `maxAttempts`.
package struct RetryPolicy: Sendable {
    /// Consecutive failed attempts (without any new bytes) before the transfer fails; nil: no
    /// limit, the resource timeout decides.
    package var maxAttempts: Int?
    package var baseDelay: Duration
    package var maxDelay: Duration
    /// The longest `Retry-After` Ferry waits for; longer requests fail the transfer.
    package var maxRetryAfter: Duration
    /// How long a transfer may go without progress before it fails.
    package var resourceTimeout: Duration

    package static let defaultResourceTimeout = Duration.seconds(7 * 86_400)

    package init(
        maxAttempts: Int? = nil, baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(60),
        maxRetryAfter: Duration = .seconds(3600), resourceTimeout: Duration = Self.defaultResourceTimeout
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.resourceTimeout = resourceTimeout
    }

    /// The delay before the next attempt, or nil when it is time to give up (the attempt limit,
    /// or a next attempt that would start after the resource timeout).
    /// - Parameters:
    ///   - failures: consecutive failed attempts so far (≥ 1).
    ///   - retryAfter: the server's `Retry-After`, if any.
    ///   - unit: a random number in 0..<1 (injected so tests are exact).
    ///   - waited: how long the transfer has gone without progress.
    package func delay(afterFailures failures: Int, retryAfter: Duration?, unit: Double, waited: Duration) -> Duration? {
        guard let delay = delay(afterFailures: failures, retryAfter: retryAfter, unit: unit) else { return nil }
        return waited + delay <= resourceTimeout ? delay : nil
    }

    /// Statuses worth another try (DESIGN: 408, 429 and 5xx): the server may answer
    /// differently later.
    package static func isRetryable(status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status)
    }

    /// The delay before attempt `failures + 1`, or nil when the attempt limit is reached.
    /// - Parameters:
    ///   - failures: consecutive failed attempts so far (≥ 1).
    ///   - retryAfter: the server's `Retry-After`, if any.
    ///   - unit: a random number in 0..<1 (injected so tests are exact).
    package func delay(afterFailures failures: Int, retryAfter: Duration?, unit: Double) -> Duration? {
        if let maxAttempts, failures >= maxAttempts { return nil }
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
    package static func retryAfter(_ header: String?, now: Date) -> Duration? {
        guard let header = header?.trimmingWhitespace(), !header.isEmpty else { return nil }
        if let seconds = Int64(header), seconds >= 0 { return .seconds(seconds) }
        if let date = HTTPDate.parse(String(header)) { return .seconds(max(0, date.timeIntervalSince(now))) }
        return nil
    }
}
