import FerryKit
import Foundation
import Testing

@testable import FerryCore

/// One download attempt without I/O: every phase × every input written out, then the paths
/// through it that matter (resuming, ranges, a server that answers ranges wrongly, a file that
/// changes, a short response).
@Suite struct DownloadAttemptTests {
    typealias Attempt = DownloadAttempt
    typealias Action = DownloadAttempt.Action

    static let split: Int64 = 1 << 20
    static let fresh = ResumePlan(durableBytes: 0, knownTotal: nil, validator: nil)
    static let v = "\"v1\""

    static func head(_ status: Int, range: String? = nil, length: Int64? = nil, validator: String? = v, ranges: Bool = false) -> Attempt.Input {
        .head(.init(response: .init(status: status, contentRange: range, contentLength: length, validator: validator), acceptsRanges: ranges))
    }

    static func start(durable: Int64 = 0, total: Int64? = nil, validator: String? = nil, ranges: String? = nil) -> Attempt.Input {
        .start(.init(durableBytes: durable, total: total, validator: validator, ranges: ranges))
    }

    /// Ranges of a 64 MiB file, the first half durable.
    static let journaledRanges = SegmentPlan.journalText([(0, 16 << 20, 32 << 20), (32 << 20, 48 << 20, 64 << 20)])

    /// An attempt in `phase`, as it gets there.
    static func attempt(in phase: Attempt.Phase, mode: ConnectionTuner.Mode? = .adaptive(maximum: 16)) -> Attempt {
        var attempt = Attempt(mode: mode, minimumSplit: split)
        switch phase {
        case .idle: break
        case .asking: _ = attempt.handle(start())
        case .streaming: _ = attempt.handle(start()); _ = attempt.handle(head(200, length: 100))
        case .segmenting: _ = attempt.handle(start(total: 64 << 20, validator: v, ranges: journaledRanges))
        case .ended: _ = attempt.handle(start()); _ = attempt.handle(head(200, length: 100)); _ = attempt.handle(.streamEnded(length: 100))
        }
        #expect(attempt.phase == phase)
        return attempt
    }

    enum Input: String, CaseIterable {
        case start, head, rangesDone, rangesChanged, streamEnded

        var input: Attempt.Input {
            switch self {
            case .start: DownloadAttemptTests.start()
            case .head: DownloadAttemptTests.head(200, length: 100)
            case .rangesDone: .rangesEnded(changed: nil)
            case .rangesChanged: .rangesEnded(changed: "the validator changed")
            case .streamEnded: .streamEnded(length: 100)
            }
        }
    }

    /// What each input does in each phase: the actions and the phase after. Any pair not listed
    /// is a mistake of the executor, and ends the attempt with an internal error.
    static let table: [Attempt.Phase: [Input: ([Action], Attempt.Phase)]] = [
        .idle: [.start: ([.request(fresh)], .asking)],
        .asking: [.head: ([.accept(from: 0, total: 100, validator: v, restartReason: nil), .stream(total: 100)], .streaming)],
        .streaming: [.streamEnded: ([.finish(total: nil)], .ended)],
        .segmenting: [
            .rangesDone: ([.finish(total: nil)], .ended),
            .rangesChanged: ([.restart(reason: "the validator changed"), .request(fresh)], .asking),
        ],
        .ended: [:],
    ]

    @Test(arguments: Attempt.Phase.allCases)
    func everyInputInEveryPhase(_ phase: Attempt.Phase) {
        for input in Input.allCases {
            var attempt = Self.attempt(in: phase)
            let actions = attempt.handle(input.input)
            if let (expected, after) = Self.table[phase]?[input] {
                #expect(actions == expected, "\(phase) × \(input)")
                #expect(attempt.phase == after, "\(phase) × \(input)")
            } else {
                guard case .fail(let error)? = actions.first, actions.count == 1 else {
                    Issue.record("\(phase) × \(input): \(actions)")
                    continue
                }
                #expect(error.code == .internalError, "\(phase) × \(input)")
                #expect(attempt.phase == .ended)
            }
        }
    }

    @Test func aPartFileWithAValidatorResumesWhereItsDurableBytesEnd() {
        var attempt = Attempt(mode: nil, minimumSplit: Self.split)
        let plan = ResumePlan(durableBytes: 50, knownTotal: 100, validator: Self.v)
        #expect(attempt.handle(Self.start(durable: 50, total: 100, validator: Self.v)) == [.request(plan)])
        #expect(
            attempt.handle(Self.head(206, range: "bytes 50-99/100"))
                == [.accept(from: 50, total: 100, validator: Self.v, restartReason: nil), .stream(total: 100)]
        )
        #expect(attempt.handle(.streamEnded(length: 100)) == [.finish(total: nil)])
    }

    @Test func bytesNobodyCanProveCurrentAreDiscardedFirst() {
        var attempt = Attempt(mode: nil, minimumSplit: Self.split)
        let actions = attempt.handle(Self.start(durable: 50, total: 100, validator: nil))
        guard case .restart(let reason) = actions.first else { Issue.record("\(actions)"); return }
        #expect(reason.contains("cannot be proven current"))
        // The same plan, from zero: no Range, no If-Range.
        #expect(actions.dropFirst() == [.request(ResumePlan(durableBytes: 50, knownTotal: 100, validator: nil))])
        #expect(ResumePlan(durableBytes: 50, knownTotal: 100, validator: nil).requestHeaders.isEmpty)
    }

    @Test func journaledRangesResumeEachFromItsOwnEnd() {
        var attempt = Attempt(mode: nil, minimumSplit: Self.split)
        let actions = attempt.handle(Self.start(durable: 0, total: 64 << 20, validator: Self.v, ranges: Self.journaledRanges))
        guard actions.count == 2, actions[0] == .resumeRanges(durableBytes: 32 << 20),
            case .fetchRanges(let plan, let validator, let mode, let first) = actions[1]
        else { Issue.record("\(actions)"); return }
        #expect(plan.durableRanges.map(\.durable) == [16 << 20, 48 << 20])
        #expect(validator == Self.v && mode == .fixed(1) && !first)
    }

    @Test(arguments: [
        ("not json", Int64(64 << 20), v as String?),
        (journaledRanges, Int64(32 << 20), v),  // they do not cover the file
        (journaledRanges, Int64(64 << 20), nil),  // nothing to send in If-Range
    ])
    func rangesThatCannotBeTrustedStartTheFileOver(_ ranges: String, total: Int64, validator: String?) {
        var attempt = Attempt(mode: .fixed(4), minimumSplit: Self.split)
        #expect(
            attempt.handle(Self.start(durable: 0, total: total, validator: validator, ranges: ranges)) == [
                .restart(reason: "its ranges in the journal were not readable"),
                .request(ResumePlan(durableBytes: 0, knownTotal: total, validator: validator)),
            ]
        )
    }

    @Test func aLargeFileThatTakesRangesIsFetchedOverSeveralConnections() {
        for (status, range, acceptsRanges) in [(206, "bytes 0-67108863/67108864", false), (200, nil, true)] {
            var attempt = Attempt(mode: .adaptive(maximum: 16), minimumSplit: Self.split)
            _ = attempt.handle(Self.start())
            let actions = attempt.handle(Self.head(status, range: range, length: 64 << 20, ranges: acceptsRanges))
            guard actions.count == 2, case .fetchRanges(let plan, Self.v, .adaptive(maximum: 16), true) = actions[1] else {
                Issue.record("\(status): \(actions)")
                continue
            }
            #expect(plan.total == 64 << 20 && plan.writtenBytes == 0)
            #expect(attempt.phase == .segmenting)
        }
    }

    @Test func oneStreamWhenRangesCannotHelp() {
        let big: Int64 = 64 << 20
        let cases: [(String, ConnectionTuner.Mode?, Attempt.Input)] = [
            ("one connection asked for", nil, Self.head(200, length: big, ranges: true)),
            ("no validator for If-Range", .fixed(4), Self.head(200, length: big, validator: nil, ranges: true)),
            ("ranges not accepted", .fixed(4), Self.head(200, length: big)),
            ("no length", .fixed(4), Self.head(200, ranges: true)),
            ("under two pieces", .fixed(4), Self.head(200, length: 2 * Self.split - 1, ranges: true)),
        ]
        for (why, mode, head) in cases {
            var attempt = Attempt(mode: mode, minimumSplit: Self.split)
            _ = attempt.handle(Self.start())
            let actions = attempt.handle(head)
            guard case .stream = actions.last else { Issue.record("\(why): \(actions)"); continue }
            #expect(attempt.phase == .streaming, "\(why)")
        }
    }

    @Test func aServerThatKeepsAnsweringRangesWronglyFailsTheAttempt() {
        var attempt = Attempt(mode: nil, minimumSplit: Self.split)
        _ = attempt.handle(Self.start(durable: 50, total: 100, validator: Self.v))
        let first = attempt.handle(Self.head(206, range: "bytes 0-99/100"))
        #expect(first == [.restart(reason: "the server sent bytes from 0 when asked for 50"), .request(Self.fresh)])
        // From zero, a 206 from elsewhere is wrong again: no second start over.
        let second = attempt.handle(Self.head(206, range: "bytes 10-99/100"))
        guard case .fail(let error) = second.first, second.count == 1 else { Issue.record("\(second)"); return }
        #expect(error.code == .rangeMismatch)
        #expect(error.message.contains("keeps answering range requests wrongly"))
    }

    @Test func afterTheFileChangedUnderItsRangesTheRestIsOneStream() {
        var attempt = Attempt(mode: .fixed(4), minimumSplit: Self.split)
        _ = attempt.handle(Self.start(total: 64 << 20, validator: Self.v, ranges: Self.journaledRanges))
        #expect(attempt.handle(.rangesEnded(changed: "a range came back as 200")) == [.restart(reason: "a range came back as 200"), .request(Self.fresh)])
        let actions = attempt.handle(Self.head(200, length: 64 << 20, validator: "\"v2\"", ranges: true))
        #expect(actions == [.accept(from: 0, total: 64 << 20, validator: "\"v2\"", restartReason: nil), .stream(total: 64 << 20)])
    }

    @Test func aFileAlreadyWholeFinishesWithoutABody() {
        var attempt = Attempt(mode: nil, minimumSplit: Self.split)
        _ = attempt.handle(Self.start(durable: 100, total: 100, validator: Self.v))
        #expect(attempt.handle(Self.head(416, range: "bytes */100")) == [.finish(total: 100)])
        #expect(attempt.phase == .ended)
    }

    @Test func aStreamThatEndsShortOfItsLengthFails() {
        var attempt = Attempt(mode: nil, minimumSplit: Self.split)
        _ = attempt.handle(Self.start())
        _ = attempt.handle(Self.head(200, length: 100))
        let actions = attempt.handle(.streamEnded(length: 60))
        guard case .fail(let error) = actions.first else { Issue.record("\(actions)"); return }
        #expect(error.code == .lengthMismatch)
        #expect(error.message == "The server promised 100 bytes but the response ended after 60.")
    }

    @Test func aStreamOfUnknownLengthEndsWhereItEnds() {
        var attempt = Attempt(mode: nil, minimumSplit: Self.split)
        _ = attempt.handle(Self.start())
        _ = attempt.handle(Self.head(200))
        #expect(attempt.handle(.streamEnded(length: 12_345)) == [.finish(total: nil)])
    }
}
