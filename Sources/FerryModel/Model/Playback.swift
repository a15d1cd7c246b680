import Foundation

/// Where a listener is in an episode or a song, kept by the daemon so that any browser (or,
/// later, a phone through sync) picks up at the same second.
public struct Playback: Codable, Sendable, Hashable {
    /// Seconds from the start.
    public var positionSeconds: Double
    /// Heard to the end (set near the end, or by hand).
    public var played: Bool
    public var updatedAt: Date

    public init(positionSeconds: Double = 0, played: Bool = false, updatedAt: Date = Date()) {
        self.positionSeconds = positionSeconds
        self.played = played
        self.updatedAt = updatedAt
    }

    /// Near the end counts as heard: within the last 30 s, or the last 5 % of something short.
    public static func isNearEnd(_ position: Double, of duration: Double) -> Bool {
        position >= duration - min(30, duration * 0.05)
    }

    /// This playback after `update`: a position (with the duration, which tells when it is near
    /// the end), or played / unplayed by hand, which wins over the position.
    /// - Throws: ``FerryError`` `invalid_request` for a negative or non-finite position or a
    ///   duration that is not positive.
    public func applying(_ update: PlaybackUpdate, now: Date = Date()) throws(FerryError) -> Playback {
        if let position = update.positionSeconds, !(position.isFinite && position >= 0) {
            throw FerryError.invalidRequest("positionSeconds must be a number of seconds, 0 or more.")
        }
        if let duration = update.durationSeconds, !(duration.isFinite && duration > 0) {
            throw FerryError.invalidRequest("durationSeconds must be a number of seconds, more than 0.")
        }
        guard update.positionSeconds != nil || update.played != nil else {
            throw FerryError.invalidRequest("Say positionSeconds, played or both.")
        }
        var next = self
        next.updatedAt = now
        if let position = update.positionSeconds {
            next.positionSeconds = position
            if let duration = update.durationSeconds, Self.isNearEnd(position, of: duration) { next.played = true }
        }
        if let played = update.played { next.played = played }
        return next
    }
}

/// A change of a ``Playback`` (`PUT /v1/episodes/{id}/playback`, `/v1/tracks/{id}/playback`).
public struct PlaybackUpdate: Codable, Sendable, Hashable {
    public var positionSeconds: Double?
    /// The media's length as the player knows it: with the position, it marks it played near the end.
    public var durationSeconds: Double?
    /// Played or unplayed by hand.
    public var played: Bool?

    public init(positionSeconds: Double? = nil, durationSeconds: Double? = nil, played: Bool? = nil) {
        self.positionSeconds = positionSeconds
        self.durationSeconds = durationSeconds
        self.played = played
    }
}
