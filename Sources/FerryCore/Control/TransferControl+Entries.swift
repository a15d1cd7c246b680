extension TransferControl {
    /// The control's transfers by id, with an index of those a worker holds: scheduling counts
    /// running transfers at every input, and must not walk half a million queued ones to do it.
    public struct Entries: Sendable {
        public private(set) var all: [Int64: Entry] = [:]
        /// Transfers a worker holds, with their session.
        private(set) var working: [Int64: String] = [:]

        public subscript(id: Int64) -> Entry? {
            get { all[id] }
            set {
                all[id] = newValue
                if let entry = newValue, entry.worker != nil { working[id] = entry.session } else { working[id] = nil }
            }
        }

        /// Those matching `belongs`, by id: the few a network change or a shutdown concerns.
        func sorted(where belongs: (Entry) -> Bool) -> [(key: Int64, value: Entry)] {
            all.filter { belongs($0.value) }.sorted { $0.key < $1.key }
        }
    }
}
