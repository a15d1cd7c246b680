import Synchronization

/// Answers of the catalog by request key, each kept for `ttl`, so that a listener who searches
/// again (or a web app that asks twice) costs Apple nothing. Only successes are kept. Bounded:
/// when full, expired answers go first, then the oldest.
final class CatalogCache: Sendable {
    private struct Entry {
        var items: [CatalogItem]
        var storedAt: Duration
    }

    let ttl: Duration
    let capacity: Int
    private let entries = Mutex<[String: Entry]>([:])

    /// - Parameter ttl: zero or less turns the cache off.
    init(ttl: Duration, capacity: Int = 256) {
        self.ttl = ttl
        self.capacity = max(1, capacity)
    }

    /// The answer stored for `key`, if it is younger than the TTL at time `now`.
    func items(for key: String, now: Duration) -> [CatalogItem]? {
        entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard now - entry.storedAt < ttl else {
                entries[key] = nil
                return nil
            }
            return entry.items
        }
    }

    func store(_ items: [CatalogItem], for key: String, now: Duration) {
        guard ttl > .zero else { return }
        entries.withLock { entries in
            if entries[key] == nil, entries.count >= capacity {
                entries = entries.filter { now - $0.value.storedAt < ttl }
                if entries.count >= capacity, let oldest = entries.min(by: { $0.value.storedAt < $1.value.storedAt })?.key {
                    entries[oldest] = nil
                }
            }
            entries[key] = Entry(items: items, storedAt: now)
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
