import Foundation

/// An episode action of the gpodder.net API: a phone downloaded, played, deleted an episode or
/// marked it new. `play` carries where the listener started, stopped and the episode's length,
/// in whole seconds. Decoding validates: an action that is not one of these, or a number where
/// a URL belongs, refuses the whole upload.
package struct EpisodeAction: Codable, Sendable, Hashable {
    package enum Kind: String, Codable, Sendable {
        case download, play, delete, new, flattr
    }

    /// The feed's URL and the episode's media URL (gpodder.net names episodes by it).
    package var podcast: String
    package var episode: String
    /// The episode's guid, which Nextcloud's GPodderSync and AntennaPod also send.
    package var guid: String?
    package var action: Kind
    package var device: String?
    /// When it happened, in seconds since 1970 (on the wire `2009-12-12T09:00:00`, UTC).
    package var timestamp: Int64?
    package var started: Int?
    package var position: Int?
    package var total: Int?

    package init(
        podcast: String, episode: String, guid: String? = nil, action: Kind, device: String? = nil, timestamp: Int64? = nil,
        started: Int? = nil, position: Int? = nil, total: Int? = nil
    ) {
        self.podcast = podcast
        self.episode = episode
        self.guid = guid
        self.action = action
        self.device = device
        self.timestamp = timestamp
        self.started = started
        self.position = position
        self.total = total
    }

    enum CodingKeys: String, CodingKey {
        case podcast, episode, guid, action, device, timestamp, started, position, total
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        podcast = try c.decode(String.self, forKey: .podcast)
        episode = try c.decode(String.self, forKey: .episode)
        guard Self.isWebURL(podcast), !episode.isEmpty, episode.utf8.count <= 4096, podcast.utf8.count <= 4096 else {
            throw DecodingError.dataCorruptedError(forKey: .podcast, in: c, debugDescription: "podcast must be an http(s) URL and episode a URL")
        }
        guid = try c.decodeIfPresent(String.self, forKey: .guid)
        let name = try c.decode(String.self, forKey: .action)
        guard let kind = Kind(rawValue: name.lowercased()) else {
            throw DecodingError.dataCorruptedError(forKey: .action, in: c, debugDescription: "'\(name.prefix(40))' is not an action (download, play, delete, new)")
        }
        action = kind
        device = try c.decodeIfPresent(String.self, forKey: .device)
        if let text = try c.decodeIfPresent(String.self, forKey: .timestamp) {
            guard let seconds = Self.seconds(fromWire: text) else {
                throw DecodingError.dataCorruptedError(forKey: .timestamp, in: c, debugDescription: "timestamp must look like 2009-12-12T09:00:00")
            }
            timestamp = seconds
        }
        // GPodderSync's clients send -1 for "none".
        func seconds(_ key: CodingKeys) throws -> Int? {
            guard let value = try c.decodeIfPresent(Int.self, forKey: key), value >= 0 else { return nil }
            return value
        }
        started = try seconds(.started)
        position = try seconds(.position)
        total = try seconds(.total)
        if kind == .play, position == nil, started != nil || total != nil {
            throw DecodingError.dataCorruptedError(forKey: .position, in: c, debugDescription: "a play with started or total needs its position")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(podcast, forKey: .podcast)
        try c.encode(episode, forKey: .episode)
        try c.encodeIfPresent(guid, forKey: .guid)
        try c.encode(action, forKey: .action)
        try c.encodeIfPresent(device, forKey: .device)
        try c.encodeIfPresent(timestamp.map(Self.wire), forKey: .timestamp)
        if action == .play {
            try c.encodeIfPresent(started, forKey: .started)
            try c.encodeIfPresent(position, forKey: .position)
            try c.encodeIfPresent(total, forKey: .total)
        }
    }

    static func isWebURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else { return false }
        return (scheme == "http" || scheme == "https") && url.host?.isEmpty == false
    }

    /// `2009-12-12T09:00:00`, also with fractions of a second, a `Z` or `+00:00`.
    static func seconds(fromWire text: String) -> Int64? {
        var trimmed = Substring(text)
        if trimmed.hasSuffix("Z") { trimmed = trimmed.dropLast() }
        // Nextcloud's GPodderSync writes UTC as `+00:00`.
        if trimmed.hasSuffix("+00:00") { trimmed = trimmed.dropLast(6) }
        if let dot = trimmed.firstIndex(of: ".") { trimmed = trimmed[..<dot] }
        let parts = trimmed.split(whereSeparator: { "-T:".contains($0) }).map { Int($0) }
        guard parts.count == 6, parts.allSatisfy({ $0 != nil }) else { return nil }
        var components = DateComponents()
        (components.year, components.month, components.day) = (parts[0], parts[1], parts[2])
        (components.hour, components.minute, components.second) = (parts[3], parts[4], parts[5])
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard components.isValidDate(in: calendar), let date = calendar.date(from: components) else { return nil }
        return Int64(date.timeIntervalSince1970)
    }

    static func wire(_ seconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
    }
}

/// A device of a sync user, as gpodder.net lists them.
package struct SyncDevice: Codable, Sendable, Hashable {
    package static let types = ["desktop", "laptop", "mobile", "server", "other"]
    package var id: String
    package var caption: String
    package var type: String
    /// How many podcasts it is subscribed to (Ferry's library is every device's).
    package var subscriptions: Int

    package init(id: String, caption: String, type: String, subscriptions: Int) {
        self.id = id
        self.caption = caption
        self.type = type
        self.subscriptions = subscriptions
    }
}
