import FerryModel
import Foundation

/// Where an episode's file can come from and what it must hash to, from its Podcasting 2.0
/// alternate enclosures. With the feed's choice, the one that is the enclosure itself (it lists
/// the enclosure's URL among its sources, or says `default="true"` with the enclosure's type)
/// gives the download's mirrors (its other http(s) sources) and its expected checksum (the
/// strongest digest of its `podcast:integrity` SRI: sha512, sha384 or sha256). A podcast that
/// chose "smallest audio" or "highest quality" downloads the alternate that is, from its first
/// http(s) source, with the others as mirrors. Pure: the library enqueues what it says.
package struct EpisodeSources: Sendable, Hashable {
    package var url: String
    /// The chosen file's content type (for its name's extension).
    package var type: String?
    package var mirrors: [String]
    package var checksum: Checksum?
    /// Why the feed's integrity value was not used (a malformed SRI, a PGP signature), for the log.
    package var note: String?

    /// The most mirrors taken from one episode.
    static let mostMirrors = 8

    package init(url: String, type: String? = nil, mirrors: [String] = [], checksum: Checksum? = nil, note: String? = nil) {
        self.url = url
        self.type = type
        self.mirrors = mirrors
        self.checksum = checksum
        self.note = note
    }

    /// - Returns: nil for an episode without an enclosure.
    package init?(_ fields: EpisodeFields, choice: EnclosureChoice = .feed) {
        guard let url = fields.enclosureURL else { return nil }
        self.init(url: url, type: fields.enclosureType)
        let alternates = fields.podcasting?.alternateEnclosures ?? []
        let same = alternates.first { $0.sources.contains { $0.uri == url } }
            ?? alternates.first { $0.isDefault && (fields.enclosureType == nil || $0.type == fields.enclosureType?.lowercased()) }
        let chosen = Self.chosen(alternates, choice, enclosure: same, enclosureType: fields.enclosureType)
        guard let group = chosen ?? same else { return }
        var sources = group.sources.filter(\.isWeb).map(\.uri)
        if chosen == nil || chosen == same {
            sources.insert(url, at: 0)
        } else {
            self.url = sources[0]
            type = group.type
        }
        var seen: Set<String> = [self.url]
        mirrors = sources.filter { seen.insert($0).inserted }.prefix(Self.mostMirrors).map { $0 }
        guard let integrity = group.integrity else { return }
        // SRI names its algorithms `sha384`; Checksum's parser takes them without the dash.
        if let strongest = integrity.digests.first, let parsed = try? Checksum(parsing: "\(strongest.algorithm)=\(strongest.hex)") {
            checksum = parsed
        } else {
            note = integrity.type == "sri"
                ? "its podcast:integrity '\(integrity.value.prefix(80))' holds no sha256, sha384 or sha512 value Ferry can read, so the file is not checked against it"
                : "its podcast:integrity is a \(integrity.type.prefix(40)), which Ferry does not check"
        }
    }

    /// The alternate a choice takes among those with an http(s) source (nil: the feed's own).
    /// "Smallest audio" compares bitrate, else length; "highest quality" stays with the
    /// enclosure's kind (audio or video) and compares height, then bitrate, then length. The
    /// enclosure's own alternate takes part (it is the feed's file); one without the figure
    /// compared loses to one that has it.
    static func chosen(
        _ alternates: [PodcastNamespace.AlternateEnclosure], _ choice: EnclosureChoice, enclosure: PodcastNamespace.AlternateEnclosure?,
        enclosureType: String?
    ) -> PodcastNamespace.AlternateEnclosure? {
        let usable = alternates.filter { $0.sources.contains(where: \.isWeb) || $0 == enclosure }
        func kind(_ type: String?) -> Substring? { type?.lowercased().split(separator: "/").first }
        switch choice {
        case .feed:
            return nil
        case .smallestAudio:
            let audio = usable.filter { kind($0.type) == "audio" }
            return audio.min { ($0.bitrate ?? .infinity, Double($0.length ?? .max)) < ($1.bitrate ?? .infinity, Double($1.length ?? .max)) }
        case .highestQuality:
            let same = usable.filter { kind($0.type) == kind(enclosureType ?? enclosure?.type) }
            return same.max { (($0.height ?? -1), $0.bitrate ?? -1, $0.length ?? -1) < (($1.height ?? -1), $1.bitrate ?? -1, $1.length ?? -1) }
        }
    }
}
