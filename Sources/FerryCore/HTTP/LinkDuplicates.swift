import Foundation

/// Metalink/HTTP's mirrors (RFC 6249): `Link: <https://mirror/file>; rel=duplicate; pri=2;
/// geo=de` on a file's answer names other servers with the same file. Read as RFC 8288 writes
/// links (several per header, quoted or bare parameters, relative references resolved against
/// the answer's URL), best first: by `pri` (lower first; none last), then in the order given. Pure.
enum LinkDuplicates {
    struct Duplicate: Sendable, Hashable {
        var url: URL
        var priority: Int
        var geo: String?
    }

    /// The most duplicates taken from one answer.
    static let maximum = 16

    static func parse(_ values: [String], base: URL) -> [Duplicate] {
        var found: [(Duplicate, Int)] = []
        for link in values.flatMap(links) {
            guard let rel = link.parameters["rel"], rel.lowercased().split(separator: " ").contains("duplicate"),
                let url = URL(string: link.target, relativeTo: base)?.absoluteURL,
                ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil
            else { continue }
            let priority = link.parameters["pri"].flatMap(Int.init).map { max(1, min($0, 999_999)) } ?? 1_000_000
            found.append((Duplicate(url: url, priority: priority, geo: link.parameters["geo"]?.lowercased()), found.count))
        }
        var seen = Set<URL>()
        return found.sorted { ($0.0.priority, $0.1) < ($1.0.priority, $1.1) }.map(\.0)
            .filter { seen.insert($0.url).inserted }
            .prefix(maximum).map { $0 }
    }

    /// A header's links: `<target>` and its `; name=value` parameters (names lower-case).
    static func links(_ header: String) -> [(target: String, parameters: [String: String])] {
        var links: [(target: String, parameters: [String: String])] = []
        var rest = Substring(header)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            let target = String(rest[rest.index(after: open)..<close])
            rest = rest[rest.index(after: close)...]
            var parameters: [String: String] = [:]
            // Parameters up to the comma that starts the next link (commas inside quotes stay).
            var end = rest.endIndex, quoted = false
            for index in rest.indices {
                if rest[index] == "\"" { quoted.toggle() }
                if rest[index] == ",", !quoted { end = index; break }
            }
            for part in rest[..<end].split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, !pair[0].isEmpty else { continue }
                parameters[pair[0].lowercased()] = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            links.append((target, parameters))
            rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
        }
        return links
    }
}
