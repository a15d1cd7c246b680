import FerryModel
import Foundation

/// How a download's bytes are split among its connections: ranges of the file in order, without
/// gaps, each with the next byte it needs, how far it is written to the part file, how far that is
/// durable, and the connection fetching it. Pure: ``SegmentedAttempt`` keeps it.
///
/// A connection takes the lowest bytes nobody fetches, a request's worth at a time (so the file
/// fills from its start and the hash can follow; each request ends where it asked, so its
/// connection is kept for the next one). When nothing is left unasked, it takes half of the
/// largest range still left (never a piece under ``minimumSplit``), so all connections end
/// together; a stalled connection's whole remainder may be taken.
struct SegmentPlan: Sendable, Hashable {
    struct Segment: Sendable, Hashable {
        var start: Int64
        /// One past its last byte; it moves down when another connection takes the upper part.
        var end: Int64
        /// The next byte to arrive (`start...end`); bytes below it are written or being written.
        var received: Int64
        /// Bytes `start..<written` are in the part file.
        var written: Int64
        /// Bytes `start..<durable` were fsynced and journaled.
        var durable: Int64
        /// The connection fetching it.
        var connection: Int?
        /// Its connection asked for all of what was left (the first response, or a lone one).
        var unbounded = false

        var remaining: Int64 { end - received }
        var isDone: Bool { written == end }
    }

    /// What a connection is to fetch: `bytes=from-(to - 1)` of segment `segment`.
    struct Assignment: Sendable, Hashable {
        var segment: Int
        var from: Int64
        var to: Int64
    }

    static let minimumSplit: Int64 = 1 << 20

    let total: Int64
    let minimumSplit: Int64
    /// By id; ids are never reused.
    private(set) var segments: [Int: Segment] = [:]
    private var nextID = 0

    /// A plan for a file of `total` bytes whose bytes `0..<done` are durable already.
    init(total: Int64, done: Int64 = 0, minimumSplit: Int64 = Self.minimumSplit) {
        self.init(total: total, durable: [(0, min(done, total), total)].filter { $0.2 > $0.0 }, minimumSplit: minimumSplit)
    }

    /// A plan from journaled ranges `(start, durable, end)`; they must cover `0..<total` in order.
    init(total: Int64, durable ranges: [(start: Int64, durable: Int64, end: Int64)], minimumSplit: Int64 = Self.minimumSplit) {
        self.total = total
        self.minimumSplit = minimumSplit
        for range in ranges {
            add(Segment(start: range.start, end: range.end, received: range.durable, written: range.durable, durable: range.durable))
        }
        merge()
    }

    /// Journaled ranges, checked: in order, without gaps or overlaps, covering `0..<total`.
    static func ranges(_ ranges: [(start: Int64, durable: Int64, end: Int64)], cover total: Int64) -> Bool {
        var at: Int64 = 0
        for range in ranges {
            guard range.start == at, range.start <= range.durable, range.durable <= range.end else { return false }
            at = range.end
        }
        return at == total && total > 0
    }

    // MARK: - Reading

    /// Segments by start.
    var ordered: [(id: Int, segment: Segment)] {
        segments.map { (id: $0.key, segment: $0.value) }.sorted { $0.segment.start < $1.segment.start }
    }

    /// Every byte is written.
    var isComplete: Bool { segments.values.allSatisfy(\.isDone) }

    /// Bytes written, in all.
    var writtenBytes: Int64 { segments.values.reduce(0) { $0 + ($1.written - $1.start) } }

    /// Bytes durable, in all.
    var durableBytes: Int64 { segments.values.reduce(0) { $0 + ($1.durable - $1.start) } }

    /// The file's bytes `0..<n` are all written: how far the hash may follow.
    var writtenPrefix: Int64 {
        var prefix: Int64 = 0
        for (_, segment) in ordered {
            guard segment.start == prefix else { break }
            prefix = segment.written
            if segment.written < segment.end { break }
        }
        return prefix
    }

    /// Ranges for the journal: `(start, durable, end)` in order.
    var durableRanges: [(start: Int64, durable: Int64, end: Int64)] {
        ordered.map { ($0.segment.start, $0.segment.durable, $0.segment.end) }
    }

    /// Connections fetching a segment now.
    var connections: Set<Int> { Set(segments.values.compactMap(\.connection)) }

    /// There is a range nobody fetches, or one large enough to split.
    var hasWorkToShare: Bool {
        segments.values.contains { ($0.connection == nil && $0.remaining > 0) || $0.remaining >= 2 * minimumSplit }
    }

    /// Bytes nobody fetches yet.
    var unasked: Int64 {
        segments.values.reduce(0) { $0 + ($1.connection == nil ? $1.remaining : 0) }
    }

    /// How much a connection asks for at a time: about two seconds of its share of the rate (so a
    /// request's round trip costs little; at least ``minimumSplit``, at most 64 MiB), less near
    /// the end so that all connections end together (down to a quarter of the minimum), and
    /// everything when one connection is all there will be.
    static func requestSize(rate: Double, connections: Int, unasked: Int64, alone: Bool, minimumSplit: Int64) -> Int64 {
        if alone { return .max }
        let share = rate / Double(max(1, connections)) * 2
        let size = min(max(Int64(share.isFinite ? min(share, 1e15) : 0), minimumSplit), 64 << 20)
        return min(size, max(minimumSplit / 4, unasked / Int64(2 * max(1, connections))))
    }

    // MARK: - Changing

    /// Gives `connection` a range of at most `size` bytes (more when what is left after it would
    /// be under half of that): the lowest bytes nobody fetches; else, from the largest remainder
    /// of another connection's range, the bytes beyond the first half of it (or beyond `size` of
    /// it, whichever is nearer; the rest is left for whoever asks next); else (when `stalled`
    /// names connections that have gone quiet) a stalled connection's remainder. Nil when there is
    /// nothing to share.
    mutating func take(for connection: Int, size: Int64 = .max, stalled: Set<Int> = []) -> Assignment? {
        if let assignment = takeUnasked(for: connection, size: size) { return assignment }
        let owned = ordered.filter { $0.segment.connection != nil && $0.segment.connection != connection }
        if let (id, victim) = owned.max(by: { $0.segment.remaining < $1.segment.remaining }), victim.remaining >= 2 * minimumSplit {
            // A range asked for without a bound (the first response) is cut just past where it
            // is: its connection then asks again while few others compete for the link (one that
            // joins a full link late gets a small share of it for a long time).
            let kept = victim.unbounded ? min(victim.remaining / 2, minimumSplit / 4) : max(minimumSplit, min(victim.remaining / 2, size))
            split(id, at: victim.received + kept)
            return takeUnasked(for: connection, size: size)
        }
        // A quiet connection may hold received bytes it has not written: the taker fetches them
        // again (the same bytes; should the quiet one write them after all, nothing changes).
        let quiet = owned.filter { stalled.contains($0.segment.connection!) && $0.segment.end > $0.segment.written }
        if let (id, victim) = quiet.max(by: { $0.segment.end - $0.segment.written < $1.segment.end - $1.segment.written }) {
            split(id, at: victim.written)
            return takeUnasked(for: connection, size: .max)
        }
        return nil
    }

    /// The lowest bytes nobody fetches, at most `size` of them (all when the rest would be under
    /// half of `size`).
    private mutating func takeUnasked(for connection: Int, size: Int64) -> Assignment? {
        guard let (id, free) = ordered.first(where: { $0.segment.connection == nil && $0.segment.remaining > 0 }) else { return nil }
        if size < .max / 2, free.remaining > size + size / 2 {
            split(id, at: free.received + size)
        }
        segments[id]?.connection = connection
        segments[id]?.unbounded = size >= .max / 2
        return Assignment(segment: id, from: free.received, to: segments[id]!.end)
    }

    /// The segment keeps `start..<point`; `point..<end` becomes a range nobody fetches.
    private mutating func split(_ id: Int, at point: Int64) {
        let victim = segments[id]!
        segments[id]?.end = point
        segments[id]?.received = min(victim.received, point)
        add(Segment(start: point, end: victim.end, received: point, written: point, durable: point))
    }

    /// `count` bytes arrived for `segment`: how many of them belong to it (fewer once its end has
    /// moved below them; the connection then stops).
    mutating func accept(_ count: Int64, for segment: Int) -> Int64 {
        guard let current = segments[segment] else { return 0 }
        let taken = max(0, min(count, current.end - current.received))
        segments[segment]?.received += taken
        return taken
    }

    /// Bytes of `segment` up to `offset` are in the part file.
    mutating func wrote(_ segment: Int, through offset: Int64) {
        guard let current = segments[segment] else { return }
        segments[segment]?.written = max(current.written, min(offset, current.end))
    }

    /// The connection lets go of `segment`: bytes received but not written are needed again.
    mutating func release(_ segment: Int) {
        guard let current = segments[segment] else { return }
        segments[segment]?.connection = nil
        segments[segment]?.received = current.written
        merge()
    }

    /// A checkpoint made these written offsets durable.
    mutating func madeDurable(_ written: [Int: Int64]) {
        for (id, offset) in written {
            guard let durable = segments[id]?.durable else { continue }
            segments[id]?.durable = max(durable, offset)
        }
        merge()
    }

    /// Written offsets by segment, to be made durable by an fsync.
    var writtenOffsets: [Int: Int64] { segments.mapValues(\.written) }

    // MARK: - The journal's form

    /// `[[start, durable, end], ...]`: the part file's ranges as the journal keeps them.
    static func journalText(_ ranges: [(start: Int64, durable: Int64, end: Int64)]) -> String {
        "[" + ranges.map { "[\($0.start),\($0.durable),\($0.end)]" }.joined(separator: ",") + "]"
    }

    /// The ranges of ``journalText(_:)``, or nil if the text is not that.
    static func ranges(journalText text: String) -> [(start: Int64, durable: Int64, end: Int64)]? {
        guard let data = text.data(using: .utf8), let rows = try? JSONDecoder().decode([[Int64]].self, from: data),
            rows.allSatisfy({ $0.count == 3 })
        else { return nil }
        return rows.map { ($0[0], $0[1], $0[2]) }
    }

    @discardableResult
    private mutating func add(_ segment: Segment) -> Int {
        defer { nextID += 1 }
        segments[nextID] = segment
        return nextID
    }

    /// Joins neighbours that are both done and durable and free: the journal's list stays short.
    private mutating func merge() {
        var previous: (id: Int, segment: Segment)?
        for (id, segment) in ordered {
            if let (pid, p) = previous, p.isDone, segment.isDone, p.durable == p.end, segment.durable == segment.end,
                p.connection == nil, segment.connection == nil, p.end == segment.start
            {
                segments[pid]?.end = segment.end
                segments[pid]?.received = segment.end
                segments[pid]?.written = segment.end
                segments[pid]?.durable = segment.end
                segments[id] = nil
                previous = (pid, segments[pid]!)
            } else {
                previous = (id, segment)
            }
        }
    }
}
