import FerryKit
import Foundation

/// How episode actions and playback meet, the same in every ``ListeningStore``.
extension EpisodeAction {
    /// The device Ferry's own actions (web app, CLI) are reported from.
    package static let ownDevice = "ferry"

    /// The playback after this phone's action, or nil when it changes nothing: an action older
    /// than what the daemon knows (saved since in the web app) loses; `new` marks the episode
    /// unplayed; a `play` with a position moves there. Other actions leave playback alone.
    package func playback(after current: Playback?, now: Date) -> Playback? {
        guard action == .play || action == .new else { return nil }
        let when = timestamp.map { Date(timeIntervalSince1970: TimeInterval($0)) } ?? now
        if let current, current.updatedAt.timeIntervalSince1970.rounded(.down) > when.timeIntervalSince1970 { return nil }
        var next = current ?? Playback(updatedAt: when)
        if action == .new {
            next.played = false
        } else if let position {
            let update = PlaybackUpdate(positionSeconds: Double(position), durationSeconds: total.flatMap { $0 > 0 ? Double($0) : nil })
            guard let applied = try? next.applying(update, now: when) else { return nil }
            next = applied
        } else {
            return nil
        }
        next.updatedAt = when
        return next
    }

    /// What the web app (or the CLI) changed, as a phone will read it: a `play` from where the
    /// listener was to where they are now, or `new` for unplayed. Stores keep one per episode.
    /// - Parameters:
    ///   - feed: the podcast's feed URL; `media`: the episode's enclosure URL (gpodder.net's names).
    ///   - total: the episode's length in seconds, if known.
    package static func own(feed: String, media: String, guid: String?, total: Int?, from previous: Playback?, to next: Playback) -> EpisodeAction {
        var action: EpisodeAction
        if next.played, previous?.played != true, let total {
            // Marked played: the end, which every client takes as heard.
            action = EpisodeAction(podcast: feed, episode: media, guid: guid, action: .play, started: 0, position: total, total: total)
        } else if !next.played, previous?.played == true, next.positionSeconds == previous?.positionSeconds {
            action = EpisodeAction(podcast: feed, episode: media, guid: guid, action: .new)
        } else {
            let position = Int(next.positionSeconds.rounded(.down))
            let started = min(Int((previous?.positionSeconds ?? 0).rounded(.down)), position)
            action = EpisodeAction(podcast: feed, episode: media, guid: guid, action: .play, started: started, position: position, total: total)
        }
        action.device = ownDevice
        action.timestamp = Int64(next.updatedAt.timeIntervalSince1970)
        return action
    }
}
