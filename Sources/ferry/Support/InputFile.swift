import FerryKit
import Foundation

/// `ferry get -i FILE`: URLs one download a line, as aria2c's input files have them. Other URLs
/// of the same file (mirrors) follow on the same line after a tab or spaces; indented lines
/// below a line set its options (`out=NAME`, `dir=FOLDER`, `checksum=sha-256=HEX`); `#` starts
/// a comment line.
///
/// ```
/// https://a.example/debian.iso	https://b.example/debian.iso
///   out=debian-12.iso
///   checksum=sha-256=…
/// https://a.example/notes.txt
/// ```
struct InputFile {
    struct Entry: Equatable {
        var urls: [String]
        var out: String?
        var dir: String?
        var checksum: String?
        /// Where it starts in the file, for messages.
        var line: Int

        var hasOptions: Bool { out != nil || dir != nil || checksum != nil || urls.count > 1 }
    }

    var entries: [Entry] = []

    /// - Throws: a message naming the line of an option without a URL above it, an unknown
    ///   option, or a malformed checksum.
    init(_ text: String) throws(FerryError) {
        var number = 0
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            guard raw.first == " " || raw.first == "\t" else {
                entries.append(Entry(urls: line.split(whereSeparator: \.isWhitespace).map(String.init), line: number))
                continue
            }
            guard !entries.isEmpty else { throw Self.error(number, "'\(line.prefix(40))' is an option, but no URL comes before it") }
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw Self.error(number, "'\(line.prefix(40))' is not NAME=VALUE") }
            switch parts[0].trimmingCharacters(in: .whitespaces) {
            case "out": entries[entries.count - 1].out = parts[1]
            case "dir": entries[entries.count - 1].dir = parts[1]
            case "checksum":
                do {
                    _ = try Checksum(parsing: parts[1])
                } catch {
                    throw Self.error(number, error.message)
                }
                entries[entries.count - 1].checksum = parts[1]
            case let name:
                throw Self.error(number, "'\(name.prefix(30))' is not an option Ferry reads here (out, dir, checksum)")
            }
        }
    }

    private static func error(_ line: Int, _ message: String) -> FerryError {
        FerryError.invalidRequest("Line \(line) of the input file: \(message).")
    }

    /// The requests that queue every entry: plain URLs together (up to `batch` a request, the
    /// daemon's limit), each entry with options or mirrors on its own. Relative folders are
    /// resolved against `base`.
    func requests(
        template: CreateTransfersRequest, batch: Int = 10_000, resolve: (String) -> String
    ) -> [CreateTransfersRequest] {
        var requests: [CreateTransfersRequest] = []
        var plain: [String] = []
        func flush() {
            guard !plain.isEmpty else { return }
            var request = template
            request.urls = plain
            requests.append(request)
            plain = []
        }
        for entry in entries {
            guard entry.hasOptions else {
                plain.append(entry.urls[0])
                if plain.count == batch { flush() }
                continue
            }
            flush()
            var request = template
            request.urls = [entry.urls[0]]
            request.mirrors = entry.urls.count > 1 ? Array(entry.urls.dropFirst()) : template.mirrors
            request.directory = entry.dir.map(resolve) ?? template.directory
            request.filename = entry.out ?? template.filename
            // `out` may name a path below `dir`, as in aria2c.
            if let out = entry.out, out.contains("/") {
                let folder = request.directory ?? resolve(".")
                let path = URL(fileURLWithPath: out, relativeTo: URL(fileURLWithPath: folder, isDirectory: true)).standardizedFileURL
                request.directory = path.deletingLastPathComponent().path
                request.filename = path.lastPathComponent
            }
            request.checksum = entry.checksum ?? template.checksum
            requests.append(request)
        }
        flush()
        return requests
    }
}
