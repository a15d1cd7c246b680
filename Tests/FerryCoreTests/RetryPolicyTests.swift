import Foundation
@testable import FerryCore
import Testing

@Suite struct RetryPolicyTests {
    @Test func defaults() {
        let policy = RetryPolicy()
        #expect(policy.maxAttempts == nil, "waiting is ended by the resource timeout, not a count")
        #expect(policy.baseDelay == .seconds(1))
        #expect(policy.maxDelay == .seconds(60), "at most a minute between attempts")
        #expect(policy.maxRetryAfter == .seconds(3600))
        #expect(policy.resourceTimeout == .seconds(7 * 86_400))
    }

    // MARK: - Statuses

    @Test(arguments: [408, 429, 500, 501, 502, 503, 504, 505, 507, 520, 599])
    func retryableStatuses(_ status: Int) {
        #expect(RetryPolicy.isRetryable(status: status))
    }

    @Test(arguments: [0, 100, 200, 206, 301, 304, 400, 401, 403, 404, 407, 409, 410, 416, 428, 430, 451, 499, 600, 999, -500])
    func permanentStatuses(_ status: Int) {
        #expect(!RetryPolicy.isRetryable(status: status))
    }

    // MARK: - Backoff

    /// Equal jitter: step/2 + step/2 × unit, with step = base × 2^(failures − 1), capped.
    @Test(arguments: [
        (1, 0.0, Duration.milliseconds(500)),
        (1, 0.5, .milliseconds(750)),
        (1, 0.75, .milliseconds(875)),
        (2, 0.0, .seconds(1)),
        (2, 0.5, .milliseconds(1500)),
        (3, 0.0, .seconds(2)),
        (3, 0.75, .milliseconds(3500)),
        (4, 0.25, .seconds(5)),
        (6, 0.5, .seconds(24)),
        (7, 0.0, .seconds(30)),  // 64 s capped to 60
        (7, 0.5, .seconds(45)),
    ])
    func exponentialBackoffWithJitter(_ failures: Int, _ unit: Double, _ expected: Duration) {
        #expect(RetryPolicy().delay(afterFailures: failures, retryAfter: nil, unit: unit) == expected)
    }

    @Test(arguments: 1...6, [0.0, 0.1, 0.5, 0.9, 0.999_999])
    func delayStaysWithinHalfAndWholeStep(_ failures: Int, _ unit: Double) throws {
        let step = Duration.seconds(1 << (failures - 1))
        let delay = try #require(RetryPolicy().delay(afterFailures: failures, retryAfter: nil, unit: unit))
        #expect(delay >= step / 2)
        #expect(delay < step)
    }

    @Test func delayGrowsWithFailures() throws {
        let delays = try (1...7).map { try #require(RetryPolicy().delay(afterFailures: $0, retryAfter: nil, unit: 0.5)) }
        #expect(delays == [0.75, 1.5, 3, 6, 12, 24, 45].map { Duration.milliseconds(Int64($0 * 1000)) })
    }

    @Test(arguments: [
        (7, 0.5, Duration.seconds(45)),  // 64 s capped to 60
        (8, 0.0, .seconds(30)),
        (8, 0.5, .seconds(45)),
        (9, 0.999_999, .microseconds(59_999_970)),
        (31, 0.5, .seconds(45)),
        (32, 0.5, .seconds(45)),  // the exponent stops at 30
        (1000, 0.0, .seconds(30)),
        (Int.max - 1, 0.5, .seconds(45)),
    ])
    func delayIsCappedAtMaxDelay(_ failures: Int, _ unit: Double, _ expected: Duration) {
        #expect(RetryPolicy().delay(afterFailures: failures, retryAfter: nil, unit: unit) == expected)
    }

    @Test func customBaseAndCap() {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: .milliseconds(100), maxDelay: .seconds(1))
        #expect(policy.delay(afterFailures: 1, retryAfter: nil, unit: 0) == .milliseconds(50))
        #expect(policy.delay(afterFailures: 4, retryAfter: nil, unit: 0.5) == .milliseconds(600))
        #expect(policy.delay(afterFailures: 5, retryAfter: nil, unit: 0) == .milliseconds(500))  // 1.6 s capped to 1 s
        #expect(policy.delay(afterFailures: 9, retryAfter: nil, unit: 0.5) == .milliseconds(750))
    }

    // MARK: - maxAttempts

    @Test(arguments: [1, 2, 3, 8, 20])
    func givesUpAfterMaxAttempts(_ maxAttempts: Int) {
        let policy = RetryPolicy(maxAttempts: maxAttempts)
        let retried = (1...maxAttempts + 3).filter { policy.delay(afterFailures: $0, retryAfter: nil, unit: 0.5) != nil }
        #expect(retried == Array(1..<maxAttempts))
        // A Retry-After does not buy extra attempts.
        #expect(policy.delay(afterFailures: maxAttempts, retryAfter: .seconds(1), unit: 0) == nil)
        #expect(policy.delay(afterFailures: maxAttempts + 1, retryAfter: .zero, unit: 0) == nil)
    }

    @Test func defaultPolicyNeverCountsAttempts() {
        let policy = RetryPolicy()
        for failures in [8, 100, 10_000] {
            #expect(policy.delay(afterFailures: failures, retryAfter: nil, unit: 0) == .seconds(30))
        }
    }

    // MARK: - Resource timeout

    /// A next attempt that would start after the resource timeout is not made: the transfer fails.
    static let week: Int64 = 7 * 86_400
    static let waits: [(Duration, Duration?)] = [
        (.zero, .seconds(30)),
        (.seconds(week - 30), .seconds(30)),  // the last attempt lands exactly on the timeout
        (.seconds(week - 29), nil),
        (.seconds(week), nil),
        (.seconds(30 * 86_400), nil),
    ]

    @Test(arguments: waits)
    func waitingEndsAtTheResourceTimeout(_ waited: Duration, _ expected: Duration?) {
        #expect(RetryPolicy().delay(afterFailures: 20, retryAfter: nil, unit: 0, waited: waited) == expected)
    }

    @Test func aShortResourceTimeoutAlsoBoundsRetryAfter() {
        let policy = RetryPolicy(resourceTimeout: .seconds(60))
        #expect(policy.delay(afterFailures: 1, retryAfter: .seconds(50), unit: 0, waited: .seconds(5)) == .seconds(50))
        #expect(policy.delay(afterFailures: 1, retryAfter: .seconds(50), unit: 0, waited: .seconds(11)) == nil)
        // The attempt limit, when set, still applies within the timeout.
        #expect(RetryPolicy(maxAttempts: 2).delay(afterFailures: 2, retryAfter: nil, unit: 0, waited: .zero) == nil)
    }

    @Test func zeroMaxAttemptsNeverRetries() {
        #expect(RetryPolicy(maxAttempts: 0).delay(afterFailures: 1, retryAfter: nil, unit: 0) == nil)
    }

    // MARK: - Retry-After in delay

    @Test(arguments: [
        (Duration.seconds(30), Duration?.some(.seconds(30))),  // no jitter, whatever the unit
        (.milliseconds(1), .milliseconds(1)),
        (.zero, .zero),
        (.seconds(-5), .zero),  // never negative
        (.seconds(600), .seconds(600)),  // longer than maxDelay is still honoured
        (.seconds(3600), .seconds(3600)),  // exactly maxRetryAfter
        (.seconds(3600) + .nanoseconds(1), nil),  // longer: give up rather than wait
        (.seconds(86_400), nil),
    ])
    func retryAfterOverridesBackoff(_ retryAfter: Duration, _ expected: Duration?) {
        for unit in [0.0, 0.9] {
            #expect(RetryPolicy().delay(afterFailures: 3, retryAfter: retryAfter, unit: unit) == expected)
        }
    }

    @Test func customMaxRetryAfter() {
        let policy = RetryPolicy(maxRetryAfter: .seconds(10))
        #expect(policy.delay(afterFailures: 1, retryAfter: .seconds(10), unit: 0) == .seconds(10))
        #expect(policy.delay(afterFailures: 1, retryAfter: .seconds(11), unit: 0) == nil)
    }

    // MARK: - Parsing Retry-After

    static let now = Date(timeIntervalSince1970: 784_111_777 - 90)  // 90 s before the RFC example date

    @Test(arguments: [
        ("120", Duration?.some(.seconds(120))),
        (" 120 ", .seconds(120)),
        ("0", .zero),
        ("007", .seconds(7)),
        ("86400", .seconds(86_400)),
        ("9223372036854775807", .seconds(Int64.max)),
        // HTTP dates, in all three forms, relative to now.
        ("Sun, 06 Nov 1994 08:49:37 GMT", .seconds(90)),
        ("Sunday, 06-Nov-94 08:49:37 GMT", .seconds(90)),
        ("Sun Nov  6 08:49:37 1994", .seconds(90)),
        ("Sun, 06 Nov 1994 08:48:07 GMT", .zero),  // now exactly
        ("Sun, 06 Nov 1994 08:00:00 GMT", .zero),  // in the past: go now
        ("Thu, 01 Jan 1970 00:00:00 GMT", .zero),
        ("Sun, 06 Nov 1994 09:48:07 GMT", .seconds(3600)),
        // Not a delay.
        ("-5", nil),
        ("1.5", nil),
        ("1e3", nil),
        ("120 seconds", nil),
        ("soon", nil),
        ("", nil),
        ("   ", nil),
        ("99999999999999999999", nil),  // overflows Int64
        ("Sun, 31 Feb 1994 08:49:37 GMT", nil),
        ("Sun, 06 Nov 1994", nil),
    ])
    func parsesRetryAfter(_ header: String, _ expected: Duration?) {
        #expect(RetryPolicy.retryAfter(header, now: Self.now) == expected)
    }

    @Test func missingRetryAfter() {
        #expect(RetryPolicy.retryAfter(nil, now: Self.now) == nil)
    }

    @Test func retryAfterDateKeepsFractionsOfNow() {
        let now = Self.now.addingTimeInterval(0.5)
        #expect(RetryPolicy.retryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .milliseconds(89_500))
    }

    @Test func retryAfterTooFarInTheFutureFailsTheTransfer() throws {
        let wait = try #require(RetryPolicy.retryAfter("Sun, 06 Nov 1994 10:00:00 GMT", now: Self.now))
        #expect(wait == .seconds(4_313))
        #expect(RetryPolicy().delay(afterFailures: 1, retryAfter: wait, unit: 0.5) == nil)
        #expect(RetryPolicy().delay(afterFailures: 1, retryAfter: RetryPolicy.retryAfter("7200", now: Self.now), unit: 0) == nil)
    }
}
