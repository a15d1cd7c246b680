import FerryModel
import Foundation

/// Where an episode's file can come from and what it must hash to, from its Podcasting 2.0
/// alternate enclosures: the one that is the enclosure itself (it lists the enclosure's URL among
/// its sources, or says `default="true"` with the enclosure's type) gives the download's mirrors
/// (its other http(s) sources) and its expected checksum (the strongest digest of its
/// `podcast:integrity` SRI: sha512, sha384 or sha256). Pure: the library enqueues what it says.
package struct EpisodeSources: Sendable, Hashable {
    package var url: String
    package var mirrors: [String]
    package var checksum: Checksum?
    /// Why the feed's integrity value was not used (a malformed SRI, a PGP signature), for the log.
    package var note: String?

    /// The most mirrors taken from one episode.
    static let mostMirrors = 8

    package init(url: String, mirrors: [String] = [], checksum: Checksum? = nil, note: String? = nil) {
        self.url = url
        self.mirrors = mirrors
        self.checksum = checksum
        self.note = note
    }

    /// - Returns: nil for an episode without an enclosure.
    package init?(_ fields: EpisodeFields) {
        guard let url = fields.enclosureURL else { return nil }
        self.init(url: url)
        let alternates = fields.podcasting?.alternateEnclosures ?? []
        let same = alternates.first { $0.sources.contains { $0.uri == url } }
            ?? alternates.first { $0.isDefault && (fields.enclosureType == nil || $0.type == fields.enclosureType?.lowercased()) }
        guard let same else { return }
        var seen: Set<String> = [url]
        mirrors = same.sources.filter(\.isWeb).map(\.uri).filter { seen.insert($0).inserted }.prefix(Self.mostMirrors).map { $0 }
        guard let integrity = same.integrity else { return }
        // SRI names its algorithms `sha384`; Checksum's parser takes them without the dash.
        if let strongest = integrity.digests.first, let parsed = try? Checksum(parsing: "\(strongest.algorithm)=\(strongest.hex)") {
            checksum = parsed
        } else {
            note = integrity.type == "sri"
                ? "its podcast:integrity '\(integrity.value.prefix(80))' holds no sha256, sha384 or sha512 value Ferry can read, so the file is not checked against it"
                : "its podcast:integrity is a \(integrity.type.prefix(40)), which Ferry does not check"
        }
    }
}
