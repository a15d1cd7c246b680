import FerryFeeds
import Foundation

extension EpisodeRecord {
    /// What merging a feed's episodes into a podcast's writes, matched by guid: the known
    /// episodes whose feed version changed, and those not seen before (a guid the feed repeats
    /// is one episode, with its last version), in feed order.
    /// Known episodes the feed no longer lists are marked gone from `now` (kept: a feed that
    /// lists none at all is taken for a broken one, and marks nothing); one listed again is not.
    /// - Parameter markNew: mark episodes not seen before as new (false on the first fetch).
    package static func merge(
        _ incoming: [FeedEpisode], into existing: [EpisodeRecord], podcastId: Int64, markNew: Bool, now: Date
    ) -> (changed: [EpisodeRecord], added: [EpisodeRecord]) {
        var known = Dictionary(existing.map { ($0.guid, $0) }, uniquingKeysWith: { first, _ in first })
        var changed: [String: EpisodeRecord] = [:]
        var changedOrder: [String] = []
        var added: [EpisodeRecord] = []
        var addedIndex: [String: Int] = [:]
        for episode in incoming {
            if let index = addedIndex[episode.guid] {
                added[index].update(from: episode)
            } else if var record = known[episode.guid] {
                let before = record
                record.update(from: episode)
                guard record != before else { continue }
                if changed[episode.guid] == nil { changedOrder.append(episode.guid) }
                changed[episode.guid] = record
                known[episode.guid] = record
            } else {
                addedIndex[episode.guid] = added.count
                added.append(EpisodeRecord(podcastId: podcastId, episode: episode, isNew: markNew, now: now))
            }
        }
        let listed = Set(incoming.map(\.guid))
        for record in existing where !incoming.isEmpty && !listed.contains(record.guid) && record.goneSince == nil {
            guard var record = known[record.guid] else { continue }
            record.goneSince = now
            if changed[record.guid] == nil { changedOrder.append(record.guid) }
            changed[record.guid] = record
            known[record.guid] = record
        }
        return (changedOrder.compactMap { changed[$0] }, added)
    }
}
