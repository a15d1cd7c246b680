import FerryCore
import Foundation

/// The show id in an Apple Podcasts page address, which is what listeners copy and paste:
/// `https://podcasts.apple.com/us/podcast/some-name/id123456789?i=1000123` → 123456789
/// (the `i` parameter names an episode; the lookup wants the show). Older
/// `itunes.apple.com/.../podcast/...` addresses, which the catalog itself still returns, work too.
package enum ApplePodcastsURL {
    static let hosts: Set<String> = ["podcasts.apple.com", "itunes.apple.com"]

    /// - Returns: the show's catalog id, or nil if `url` is not an Apple Podcasts show page.
    package static func id(from url: URL) -> Int64? {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = url.host?.lowercased(), hosts.contains(host)
        else { return nil }
        let segments = url.path.split(separator: "/")
        // …/podcast/[name/]id123: the id is the last segment, and a `podcast` segment comes before it.
        guard let last = segments.last, segments.dropLast().contains(where: { $0.lowercased() == "podcast" }) else { return nil }
        return number(afterID: last)
    }

    /// The same, from text as pasted (surrounding whitespace is ignored).
    package static func id(from text: String) -> Int64? {
        URL(string: String(text.trimmingWhitespace())).flatMap { id(from: $0) }
    }

    /// `id123` → 123: digits only, positive, no overflow.
    private static func number(afterID segment: Substring) -> Int64? {
        guard segment.count > 2, segment.prefix(2).lowercased() == "id" else { return nil }
        let digits = segment.dropFirst(2)
        guard digits.count <= 18, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let id = Int64(digits), id > 0 else { return nil }
        return id
    }
}
