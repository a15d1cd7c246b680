@testable import FerryCore
import Testing

@Suite struct ResumePlanTests {
    static let etag = #""v1""#
    static let date = "Sun, 06 Nov 1994 08:49:37 GMT"
    typealias Response = ResumePlan.Response

    static let noUsableRange = ResumePlan.Outcome.startOver(
        reason: "the server sent a partial response without a usable Content-Range"
    )
    static let refused = ResumePlan.Outcome.startOver(reason: "the server refused the range request (416)")
    static let ignored = "the server ignored the range request and sent the whole file"

    // MARK: - The request

    @Test func freshStartSendsNoRange() {
        let plan = ResumePlan(durableBytes: 0, knownTotal: nil, validator: nil)
        #expect(plan.offset == 0)
        #expect(plan.validator == nil)
        #expect(plan.knownTotal == nil)
        #expect(plan.discardReason == nil)
        #expect(plan.requestHeaders.isEmpty)
    }

    @Test func nothingOnDiskIgnoresTheValidator() {
        let plan = ResumePlan(durableBytes: 0, knownTotal: 1000, validator: Self.etag)
        #expect(plan.offset == 0)
        #expect(plan.validator == nil)
        #expect(plan.knownTotal == 1000)
        #expect(plan.discardReason == nil)
        #expect(plan.requestHeaders.isEmpty)
    }

    @Test(arguments: [etag, date, #""""#])
    func resumeSendsRangeAndIfRange(_ validator: String) {
        let plan = ResumePlan(durableBytes: 500, knownTotal: 1000, validator: validator)
        #expect(plan.offset == 500)
        #expect(plan.validator == validator)
        #expect(plan.knownTotal == 1000)
        #expect(plan.discardReason == nil)
        #expect(plan.requestHeaders.map(\.name) == ["Range", "If-Range"])
        #expect(plan.requestHeaders.map(\.value) == ["bytes=500-", validator])
    }

    @Test func largeOffsetsAreWrittenInFull() {
        let plan = ResumePlan(durableBytes: 5_000_000_000_000, knownTotal: nil, validator: Self.etag)
        #expect(plan.requestHeaders.first?.value == "bytes=5000000000000-")
    }

    @Test(arguments: [1, 500, 1_000_000] as [Int64])
    func bytesWithoutValidatorAreDiscarded(_ durable: Int64) {
        let plan = ResumePlan(durableBytes: durable, knownTotal: 2_000_000, validator: nil)
        #expect(plan.offset == 0)
        #expect(plan.validator == nil)
        #expect(plan.requestHeaders.isEmpty)
        #expect(
            plan.discardReason
                == "the server gave no ETag or Last-Modified date, so the \(durable) bytes on disk cannot be proven current"
        )
    }

    // MARK: - 206

    @Test(arguments: [
        // Resuming at 500 of a known 1000.
        (500, 1000, "bytes 500-999/1000", ResumePlan.Outcome.write(from: 500, total: 1000, restartReason: nil)),
        (500, 1000, "bytes 500-999/*", .write(from: 500, total: 1000, restartReason: nil)),
        (500, 1000, "BYTES 500-999/1000", .write(from: 500, total: 1000, restartReason: nil)),
        // Resuming at 500 of an unknown total.
        (500, nil, "bytes 500-999/1000", .write(from: 500, total: 1000, restartReason: nil)),
        (500, nil, "bytes 500-999/*", .write(from: 500, total: nil, restartReason: nil)),
        // A starting request answered with 206 from zero.
        (0, nil, "bytes 0-99/100", .write(from: 0, total: 100, restartReason: nil)),
        // Wrong start: the bytes would not line up with what is on disk.
        (500, 1000, "bytes 0-999/1000", .startOver(reason: "the server sent bytes from 0 when asked for 500")),
        (500, 1000, "bytes 400-999/1000", .startOver(reason: "the server sent bytes from 400 when asked for 500")),
        (500, 1000, "bytes 501-999/1000", .startOver(reason: "the server sent bytes from 501 when asked for 500")),
        (0, nil, "bytes 10-99/100", .startOver(reason: "the server sent bytes from 10 when asked for 0")),
        // Different total: the file changed.
        (500, 1000, "bytes 500-1199/1200", .startOver(reason: "the file's size changed from 1000 to 1200 bytes")),
        (500, 1000, "bytes 500-799/800", .startOver(reason: "the file's size changed from 1000 to 800 bytes")),
        // No usable Content-Range.
        (500, 1000, "bytes */1000", noUsableRange),
        (500, 1000, "bytes 500-1000/1000", noUsableRange),
        (500, 1000, "bytes 600-500/1000", noUsableRange),
        (500, 1000, "bytes -500-999/1000", noUsableRange),
        (500, 1000, "bytes 500-999/123456789012345678901234567890", noUsableRange),
        (500, 1000, "500-999/1000", noUsableRange),
        (500, 1000, "bytes */*", noUsableRange),
        (500, 1000, "", noUsableRange),
    ] as [(Int64, Int64?, String, ResumePlan.Outcome)])
    func partialContent(_ offset: Int64, _ knownTotal: Int64?, _ contentRange: String, _ expected: ResumePlan.Outcome) {
        let plan = ResumePlan(durableBytes: offset, knownTotal: knownTotal, validator: Self.etag)
        #expect(plan.evaluate(Response(status: 206, contentRange: contentRange, contentLength: 500)) == expected)
    }

    @Test func partialContentWithoutContentRange() {
        let plan = ResumePlan(durableBytes: 500, knownTotal: 1000, validator: Self.etag)
        #expect(plan.evaluate(Response(status: 206)) == Self.noUsableRange)
    }

    // MARK: - 416

    @Test(arguments: [
        (1000, 1000, "bytes */1000", ResumePlan.Outcome.complete(total: 1000)),
        (1000, nil, "bytes */1000", .complete(total: 1000)),
        (1000, 1000, " bytes */1000 ", .complete(total: 1000)),
        // Not at the end, or the sizes disagree: start again.
        (500, 1000, "bytes */1000", refused),
        (1000, 2000, "bytes */1000", refused),
        (1000, 1000, "bytes */2000", refused),
        (1000, 1000, "bytes */999", refused),
        (1000, 1000, "bytes */*", refused),
        (1000, 1000, "nonsense", refused),
    ] as [(Int64, Int64?, String, ResumePlan.Outcome)])
    func rangeNotSatisfiable(_ offset: Int64, _ knownTotal: Int64?, _ contentRange: String, _ expected: ResumePlan.Outcome) {
        let plan = ResumePlan(durableBytes: offset, knownTotal: knownTotal, validator: Self.etag)
        #expect(plan.evaluate(Response(status: 416, contentRange: contentRange)) == expected)
    }

    @Test func rangeNotSatisfiableWithoutContentRange() {
        let plan = ResumePlan(durableBytes: 1000, knownTotal: 1000, validator: Self.etag)
        #expect(plan.evaluate(Response(status: 416)) == Self.refused)
    }

    @Test func rangeNotSatisfiableOnAFreshStartIsNotCompletion() {
        // Offset 0 (nothing on disk, or bytes without a validator): "bytes */0" is no proof.
        let fresh = ResumePlan(durableBytes: 0, knownTotal: 0, validator: nil)
        #expect(fresh.evaluate(Response(status: 416, contentRange: "bytes */0")) == Self.refused)
        let unproven = ResumePlan(durableBytes: 1000, knownTotal: 1000, validator: nil)
        #expect(unproven.evaluate(Response(status: 416, contentRange: "bytes */1000")) == Self.refused)
    }

    // MARK: - 200

    @Test(arguments: [200, 203] as [Int])
    func wholeFileOnAFreshStart(_ status: Int) {
        let plan = ResumePlan(durableBytes: 0, knownTotal: nil, validator: nil)
        #expect(
            plan.evaluate(Response(status: status, contentLength: 1000, validator: Self.etag))
                == .write(from: 0, total: 1000, restartReason: nil)
        )
        #expect(plan.evaluate(Response(status: status)) == .write(from: 0, total: nil, restartReason: nil))
    }

    @Test func wholeFileAfterDiscardingUnprovenBytesHasNoSecondReason() {
        // The discard was already reported through discardReason.
        let plan = ResumePlan(durableBytes: 500, knownTotal: 1000, validator: nil)
        #expect(
            plan.evaluate(Response(status: 200, contentLength: 1000)) == .write(from: 0, total: 1000, restartReason: nil)
        )
    }

    @Test(arguments: [
        // The validator changed: the file changed.
        (#""v2""#, 1200, ResumePlan.Outcome.write(
            from: 0, total: 1200, restartReason: #"the file changed on the server (validator "v1" is now "v2")"#
        )),
        (date, nil, .write(
            from: 0, total: nil, restartReason: #"the file changed on the server (validator "v1" is now \#(date))"#
        )),
        // Same validator, or none: the server ignored Range.
        (etag, 1000, .write(from: 0, total: 1000, restartReason: ignored)),
        (nil, 1000, .write(from: 0, total: 1000, restartReason: ignored)),
    ] as [(String?, Int64?, ResumePlan.Outcome)])
    func wholeFileWhenResuming(_ validator: String?, _ length: Int64?, _ expected: ResumePlan.Outcome) {
        let plan = ResumePlan(durableBytes: 500, knownTotal: 1000, validator: Self.etag)
        #expect(plan.evaluate(Response(status: 200, contentLength: length, validator: validator)) == expected)
    }

    @Test func wholeFileIgnoresAnyContentRange() {
        let plan = ResumePlan(durableBytes: 500, knownTotal: 1000, validator: Self.etag)
        let outcome = plan.evaluate(Response(status: 200, contentRange: "bytes 500-999/1000", contentLength: 1000))
        #expect(outcome == .write(from: 0, total: 1000, restartReason: Self.ignored))
    }

    @Test func responseDefaults() {
        let response = Response(status: 200)
        #expect(response.contentRange == nil)
        #expect(response.contentLength == nil)
        #expect(response.validator == nil)
    }
}
