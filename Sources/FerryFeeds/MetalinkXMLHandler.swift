import FerryModel
import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Gathers a Metalink's files as the parser reads them; version 4's and version 3's elements by
/// their local names (both namespaces, and none). The first unsafe or wrong value stops it with
/// ``problem``.
final class MetalinkXMLHandler: NSObject, XMLParserDelegate {
    private(set) var files: [Metalink.File] = []
    private(set) var isMetalink = false
    private(set) var root: String?
    private(set) var problem: String?
    private(set) var firstError: (code: Int, line: Int, column: Int)?

    private var file: Metalink.File?
    private var text = ""
    /// The attributes of the element whose text is being read.
    private var attributes: [String: String] = [:]
    private var pieces: (length: Int64, algorithm: Checksum.Algorithm?, hashes: [String])?
    private var depth = 0

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        depth += 1
        text = ""
        self.attributes = attributes
        if depth == 1 {
            guard name == "metalink" else {
                root = name
                return parser.abortParsing()
            }
            isMetalink = true
            return
        }
        switch name {
        case "file":
            guard file == nil else { return stop(parser, "a <file> inside another") }
            guard files.count < Metalink.maximumFiles else { return stop(parser, "it names more than \(Metalink.maximumFiles) files") }
            let name = attributes["name"] ?? ""
            if let unsafety = Metalink.unsafety(ofName: name) { return stop(parser, "it names \(unsafety)") }
            file = Metalink.File(name: name, size: nil, hashes: [], pieces: nil, urls: [], metaurls: [])
        case "pieces":
            guard let length = attributes["length"].flatMap(Int64.init), length >= 1024 else {
                return stop(parser, "a piece length of \(attributes["length"]?.prefix(20) ?? "nothing"): pieces are 1 KiB at least")
            }
            pieces = (length, Self.algorithm(attributes["type"]), [])
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard text.utf8.count < 65_536 else { return }
        text += string
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        defer { depth -= 1 }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard file != nil else { return }
        switch name {
        case "size":
            guard let size = Int64(value), size >= 0 else { return stop(parser, "the size '\(value.prefix(40))' of \(file!.name)") }
            file!.size = size
        case "hash":
            if pieces != nil {
                pieces!.hashes.append(value.lowercased())
                return
            }
            // Version 3 names hashes `sha1`, `sha256`; unknown ones (`sha-224`, `tiger`) are skipped.
            guard let algorithm = Self.algorithm(attributes["type"]) else { return }
            guard let checksum = try? Checksum(algorithm: algorithm, hex: value) else {
                return stop(parser, "its \(algorithm.rawValue) of \(file!.name) is not \(algorithm.byteCount * 2) hex digits")
            }
            file!.hashes.append(checksum)
        case "pieces":
            if let (length, algorithm, hashes) = pieces, let algorithm {
                guard hashes.allSatisfy({ (try? Checksum(algorithm: algorithm, hex: $0)) != nil }) else {
                    return stop(parser, "a piece's \(algorithm.rawValue) of \(file!.name) is not \(algorithm.byteCount * 2) hex digits")
                }
                // (Not `(size + length - 1) / length`: a hostile size near Int64.max would overflow.)
                if let size = file!.size, case let count = size / length + (size % length == 0 ? 0 : 1), Int64(hashes.count) != count {
                    return stop(parser, "\(hashes.count) piece digests for \(file!.name), whose \(size) bytes make \(count)")
                }
                file!.pieces = Metalink.Pieces(length: length, algorithm: algorithm, hashes: hashes)
            }
            pieces = nil
        case "url":
            guard file!.urls.count < 1000, let url = URL(string: value), url.scheme != nil, url.host != nil else { return }
            // Version 3 lists a torrent as a `url` of `type="bittorrent"`: a document, not the file.
            if let type = attributes["type"]?.lowercased(), !["http", "https", "ftp", "ftps", "sftp"].contains(type) {
                file!.metaurls.append(url)
                return
            }
            // Version 4: `priority`, 1 first. Version 3: `preference`, 100 first.
            let priority = attributes["priority"].flatMap(Int.init)
                ?? attributes["preference"].flatMap(Int.init).map { 101 - min(100, max(0, $0)) } ?? 999_999
            let location = attributes["location"].map { $0.lowercased() }.flatMap { $0.isEmpty ? nil : $0 }
            file!.urls.append(Metalink.Source(url: url, priority: priority, location: location))
        case "metaurl":
            if let url = URL(string: value), url.scheme != nil { file!.metaurls.append(url) }
        case "file":
            files.append(file!)
            file = nil
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred error: Error) {
        let code = (error as NSError).code
        guard firstError == nil, !FeedXMLHandler.namespaceWarnings.contains(code) else { return }
        firstError = (code, parser.lineNumber, parser.columnNumber)
    }

    private func stop(_ parser: XMLParser, _ reason: String) {
        if problem == nil { problem = reason }
        parser.abortParsing()
    }

    /// `sha-256` (version 4, IANA's names) or `sha256` (version 3).
    static func algorithm(_ type: String?) -> Checksum.Algorithm? {
        guard let type = type?.lowercased() else { return nil }
        switch type.replacingOccurrences(of: "-", with: "") {
        case "sha256": return .sha256
        case "sha512": return .sha512
        case "sha384": return .sha384
        case "sha1": return .sha1
        case "md5": return .md5
        default: return nil
        }
    }
}
