import FerryModel
import Foundation

extension TransferControl {
    /// The control's transfers by id, with an index of those a worker holds: scheduling counts
    /// running transfers at every input, and must not walk half a million queued ones to do it.
    ///
    /// A transfer at rest (no worker, no timer, no failures, no wait: most of a long queue) is
    /// kept as a ``Resting`` of 24 bytes rather than an ``Entry`` of 136: half a million queued
    /// transfers take 32 MB of buckets instead of 150 MB. Readers see ``Entry`` either way.
    package struct Entries: Sendable {
        private var busy: [Int64: Entry] = [:]
        private var resting: [Int64: Resting] = [:]
        /// Session names, each kept once: a resting entry holds an index.
        private var sessions = Interned()
        /// Transfers a worker holds, with their session.
        private(set) var working: [Int64: String] = [:]

        package var count: Int { busy.count + resting.count }

        package subscript(id: Int64) -> Entry? {
            get { busy[id] ?? resting[id].map { $0.entry(sessions) } }
            set {
                if let entry = newValue, let compact = Resting(entry, sessions: &sessions) {
                    resting[id] = compact
                    if busy[id] != nil { busy[id] = nil }
                } else {
                    busy[id] = newValue
                    if resting[id] != nil { resting[id] = nil }
                }
                if let entry = newValue, entry.worker != nil { working[id] = entry.session } else if working[id] != nil { working[id] = nil }
            }
        }

        /// Those matching `belongs`, by id: the few a network change or a shutdown concerns.
        /// - Parameter mayRest: whether a resting entry can match (false skips them all).
        func sorted(mayRest: Bool = true, where belongs: (Entry) -> Bool) -> [(key: Int64, value: Entry)] {
            var found = busy.filter { belongs($0.value) }.map { (key: $0.key, value: $0.value) }
            if mayRest {
                for (id, compact) in resting {
                    let entry = compact.entry(sessions)
                    if belongs(entry) { found.append((key: id, value: entry)) }
                }
            }
            return found.sorted { $0.key < $1.key }
        }
    }

    /// An entry with nothing going on, in 24 bytes.
    struct Resting: Sendable {
        /// ``Entry/rank``; `hasRank` false: nil.
        var rank: Int64
        /// ``Entry/startAfter`` as seconds since the reference date; NaN: nil.
        var startAfter: Double
        var session: UInt32
        var state: TransferState
        var priority: Int8
        var keepsPartFile: Bool
        var hasRank: Bool

        /// Nil when `entry` has more to it than a resting entry holds.
        init?(_ entry: Entry, sessions: inout Interned) {
            guard entry.worker == nil, entry.timer == nil, entry.failures == 0, entry.waitingSince == nil, entry.retryAt == nil,
                !entry.waitsForNetwork, !entry.finishing, !entry.removed, !entry.restarting, let priority = Int8(exactly: entry.priority)
            else { return nil }
            rank = entry.rank ?? 0
            hasRank = entry.rank != nil
            startAfter = entry.startAfter?.timeIntervalSinceReferenceDate ?? .nan
            session = sessions.index(entry.session)
            state = entry.state
            self.priority = priority
            keepsPartFile = entry.keepsPartFile
        }

        func entry(_ sessions: Interned) -> Entry {
            var entry = Entry(
                state: state, session: sessions.names[Int(session)],
                startAfter: startAfter.isNaN ? nil : Date(timeIntervalSinceReferenceDate: startAfter)
            )
            entry.keepsPartFile = keepsPartFile
            entry.priority = Int(priority)
            entry.rank = hasRank ? rank : nil
            return entry
        }
    }

    /// Strings kept once each, by index. (Sessions are few; none is ever dropped.)
    struct Interned: Sendable {
        private(set) var names: [String] = []
        private var indices: [String: UInt32] = [:]

        mutating func index(_ name: String) -> UInt32 {
            if let index = indices[name] { return index }
            let index = UInt32(names.count)
            names.append(name)
            indices[name] = index
            return index
        }
    }
}
