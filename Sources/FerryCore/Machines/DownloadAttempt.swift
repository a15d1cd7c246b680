import FerryModel

/// The course of one attempt of an HTTP download, as a pure machine: what the worker does next
/// after each thing that happens. ``TransferWorker`` executes its actions (requests, streams,
/// ranges, journal writes) and feeds back what they found; the bytes themselves never pass
/// through here.
///
/// An attempt resumes the journaled ranges of a segmented download, or asks for the rest of
/// the file (``ResumePlan``). A response that may be continued over several connections is
/// handed to ``SegmentedAttempt``; otherwise one stream reads it. The file starts over at most
/// once per attempt: a server that keeps answering range requests wrongly fails it, and after
/// the file changed under the ranges the rest of the attempt is one stream, so a file that
/// keeps changing is fetched whole, as it is, from one response.
///
/// Another kind of transfer (a torrent, an FTP or SFTP file) is another attempt machine with
/// its own inputs, behind the same worker report, journal facts and events.
struct DownloadAttempt: Sendable, Hashable {
    /// What the journal knows when the attempt begins.
    struct Start: Sendable, Hashable {
        /// Bytes of the part file that one stream may continue after.
        var durableBytes: Int64
        var total: Int64?
        var validator: String?
        /// A segmented download's ranges, as journaled (``SegmentPlan/journalText(_:)``).
        var ranges: String?
    }

    /// What a response's head says, as far as the attempt cares.
    struct Head: Sendable, Hashable {
        var response: ResumePlan.Response
        /// `Accept-Ranges: bytes`.
        var acceptsRanges: Bool
    }

    enum Phase: Sendable, Hashable, CaseIterable {
        /// Before ``Input/start(_:)``.
        case idle
        /// A request is out; its head is awaited.
        case asking
        /// One stream reads the response.
        case streaming
        /// Several connections fetch ranges (``SegmentedAttempt``).
        case segmenting
        case ended
    }

    enum Input: Sendable, Hashable {
        case start(Start)
        case head(Head)
        /// The ranges ended: every byte written (nil), or the file changed (why).
        case rangesEnded(changed: String?)
        /// The one stream's response ended with the part file this long.
        case streamEnded(length: Int64)
    }

    enum Action: Sendable, Hashable {
        /// Empty the part file and journal why.
        case restart(reason: String)
        /// Journal that the journaled ranges resume (their durable bytes).
        case resumeRanges(durableBytes: Int64)
        /// Ask the URL (then its mirrors) for the file as the plan says.
        case request(ResumePlan)
        /// The response is accepted: journal it (and its name hint, digest) from `from`.
        case accept(from: Int64, total: Int64?, validator: String?, restartReason: String?)
        /// Fetch the rest over several connections; `first`: the response's body is the first.
        case fetchRanges(SegmentPlan, validator: String, mode: ConnectionTuner.Mode, first: Bool)
        /// Read the response into the part file (it must end at `total` when given).
        case stream(total: Int64?)
        /// Every byte is in the part file; `total` when progress must be told.
        case finish(total: Int64?)
        case fail(FerryError)
    }

    /// How many connections a download may use (nil: one), and the smallest piece worth a
    /// connection of its own.
    let mode: ConnectionTuner.Mode?
    let minimumSplit: Int64
    private(set) var phase = Phase.idle
    /// The plan of the request out, and of the response being read.
    private var plan: ResumePlan?
    /// The part file was emptied once in this attempt: a second time fails.
    private var startedOver = false
    /// Ranges may still be fetched over several connections.
    private var segmenting = true
    private var expectedTotal: Int64?

    init(mode: ConnectionTuner.Mode?, minimumSplit: Int64 = SegmentPlan.minimumSplit) {
        self.mode = mode
        self.minimumSplit = minimumSplit
    }

    mutating func handle(_ input: Input) -> [Action] {
        switch (phase, input) {
        case (.idle, .start(let start)): return begin(start)
        case (.asking, .head(let head)): return answered(head)
        case (.segmenting, .rangesEnded(let changed)): return rangesEnded(changed: changed)
        case (.streaming, .streamEnded(let length)): return streamEnded(length: length)
        default:
            phase = .ended
            return [.fail(FerryError(.internalError, "A download attempt was told \(input) while \(phase)."))]
        }
    }

    private mutating func begin(_ start: Start) -> [Action] {
        if let text = start.ranges, let total = start.total, let validator = start.validator,
            let ranges = SegmentPlan.ranges(journalText: text), SegmentPlan.ranges(ranges, cover: total)
        {
            let ranges = SegmentPlan(total: total, durable: ranges, minimumSplit: minimumSplit)
            phase = .segmenting
            return [
                .resumeRanges(durableBytes: ranges.durableBytes),
                .fetchRanges(ranges, validator: validator, mode: mode ?? .fixed(1), first: false),
            ]
        }
        if start.ranges != nil {
            return [.restart(reason: "its ranges in the journal were not readable")]
                + ask(ResumePlan(durableBytes: 0, knownTotal: start.total, validator: start.validator))
        }
        let plan = ResumePlan(durableBytes: start.durableBytes, knownTotal: start.total, validator: start.validator)
        let restart = plan.discardReason.map { [Action.restart(reason: $0)] } ?? []
        return restart + ask(plan)
    }

    private mutating func ask(_ plan: ResumePlan) -> [Action] {
        self.plan = plan
        phase = .asking
        return [.request(plan)]
    }

    /// The file starts over once; then, only from a fresh request.
    private mutating func startOver(_ reason: String) -> [Action] {
        startedOver = true
        return [.restart(reason: reason)] + ask(ResumePlan(durableBytes: 0, knownTotal: nil, validator: nil))
    }

    private mutating func answered(_ head: Head) -> [Action] {
        switch plan!.evaluate(head.response) {
        case .startOver(let reason):
            guard !startedOver else {
                phase = .ended
                return [.fail(FerryError(.rangeMismatch, "The server keeps answering range requests wrongly: \(reason)."))]
            }
            return startOver(reason)
        case .complete(let total):
            phase = .ended
            return [.finish(total: total)]
        case .write(let from, let total, let restartReason):
            let validator = head.response.validator
            let accept = Action.accept(from: from, total: total, validator: validator, restartReason: restartReason)
            if segmenting, let total, let validator, head.response.status == 206 || head.acceptsRanges, let mode,
                total - from >= 2 * minimumSplit
            {
                phase = .segmenting
                let ranges = SegmentPlan(total: total, done: from, minimumSplit: minimumSplit)
                return [accept, .fetchRanges(ranges, validator: validator, mode: mode, first: true)]
            }
            phase = .streaming
            expectedTotal = total
            return [accept, .stream(total: total)]
        }
    }

    private mutating func rangesEnded(changed: String?) -> [Action] {
        guard let changed else {
            phase = .ended
            return [.finish(total: nil)]
        }
        segmenting = false
        return startOver(changed)
    }

    private mutating func streamEnded(length: Int64) -> [Action] {
        phase = .ended
        if let total = expectedTotal, length != total {
            return [.fail(FerryError(.lengthMismatch, "The server promised \(total) bytes but the response ended after \(length)."))]
        }
        return [.finish(total: nil)]
    }
}
