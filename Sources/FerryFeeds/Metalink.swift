import FerryModel
import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// A Metalink document: the files of a download, each with its mirrors and digests. Version 4
/// (RFC 5854, `.meta4`) and version 3 (`.metalink`, metalinker.org) read alike.
///
/// Read with the same care as feeds (``XMLRepair``: DOCTYPE and entity declarations refused). A
/// file's name is a relative path that must stay inside the folder it is downloaded to (RFC 5854
/// §4.1.2.1): a name with `..`, an absolute one, or one with a backslash or a control character
/// refuses the document, as does a digest that is not the hex its algorithm gives.
public struct Metalink: Sendable, Hashable {
    public var files: [File]

    /// The most files one document may name.
    public static let maximumFiles = 10_000

    public struct File: Sendable, Hashable {
        /// A relative path: `name.iso`, or `folder/name.iso`.
        public var name: String
        public var size: Int64?
        /// Digests of the whole file, in document order.
        public var hashes: [Checksum]
        /// Digests of each piece, if the document gives them.
        public var pieces: Pieces?
        public var urls: [Source]
        /// Other documents of the same file (a `.torrent`): not used yet.
        public var metaurls: [URL]

        /// The folder part of ``name`` (nil for a bare name) and its last component.
        public var folder: String? { name.lastIndex(of: "/").map { String(name[..<$0]) } }
        public var fileName: String { name.split(separator: "/").last.map(String.init) ?? name }

        /// The strongest digest given (SHA-512 before SHA-384, SHA-256, SHA-1, MD5).
        public var strongestHash: Checksum? {
            let order: [Checksum.Algorithm] = [.sha512, .sha384, .sha256, .sha1, .md5]
            return hashes.min { (order.firstIndex(of: $0.algorithm) ?? 9) < (order.firstIndex(of: $1.algorithm) ?? 9) }
        }

        /// The URLs Ferry can fetch (http and https), best first: those in `locations` (ISO
        /// 3166 codes, as aria2's `--metalink-location`), then by the document's priority, then
        /// in document order.
        public func sources(preferring locations: [String] = []) -> [URL] {
            let wanted = Set(locations.map { $0.lowercased() })
            return urls.enumerated()
                .filter { ["http", "https"].contains($0.element.url.scheme?.lowercased() ?? "") }
                .sorted { a, b in
                    let (x, y) = (a.element, b.element)
                    let (xHere, yHere) = (x.location.map { wanted.contains($0) } ?? false, y.location.map { wanted.contains($0) } ?? false)
                    if xHere != yHere { return xHere }
                    if x.priority != y.priority { return x.priority < y.priority }
                    return a.offset < b.offset
                }
                .map(\.element.url)
        }
    }

    public struct Source: Sendable, Hashable {
        public var url: URL
        /// Lower is preferred (version 4's `priority`; version 3's `preference`, 0–100 with
        /// higher preferred, becomes 101 − preference).
        public var priority: Int
        /// An ISO 3166-1 code, lower-case.
        public var location: String?
    }

    public struct Pieces: Sendable, Hashable {
        public var length: Int64
        public var algorithm: Checksum.Algorithm
        public var hashes: [String]
    }

    /// Reads a Metalink document.
    /// - Throws: `metalink_invalid` when it is not XML, not Metalink, refused, too large, names
    ///   no file, or names one unsafely.
    public static func parse(_ data: Data, maximumBytes: Int = 16 << 20) throws(FerryError) -> Metalink {
        guard data.count <= maximumBytes else {
            throw invalid("it is \(data.count) bytes, more than the limit of \(maximumBytes)")
        }
        let prepared: Data
        do {
            prepared = try XMLRepair.prepare(data)
        } catch {
            throw invalid("it was refused: \(error.reason); Ferry never reads DOCTYPE or entity declarations")
        }
        let handler = MetalinkXMLHandler()
        let parser = XMLParser(data: prepared)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = handler
        let parsed = parser.parse() && handler.firstError == nil
        if let problem = handler.problem { throw invalid(problem) }
        guard handler.isMetalink else {
            if let root = handler.root { throw invalid("its root element is <\(root)>, where a Metalink has <metalink>") }
            throw invalid("it is not XML (\(FeedParser.describe(handler.firstError)))")
        }
        guard parsed else { throw invalid("it is broken (\(FeedParser.describe(handler.firstError)))") }
        guard !handler.files.isEmpty else { throw invalid("it names no file") }
        var names = Set<String>()
        for file in handler.files {
            guard names.insert(file.name).inserted else { throw invalid("it names \(file.name) twice") }
            guard !file.urls.isEmpty || !file.metaurls.isEmpty else { throw invalid("it gives no URL for \(file.name)") }
        }
        return Metalink(files: handler.files)
    }

    /// Why a name cannot be a path inside the download folder, or nil when it can.
    static func unsafety(ofName name: String) -> String? {
        if name.isEmpty { return "a file without a name" }
        if name.utf8.count > 4096 { return "a name longer than 4,096 bytes" }
        if name.hasPrefix("/") { return "an absolute name (\(name.prefix(80)))" }
        if name.contains("\\") { return "a name with a backslash (\(name.prefix(80)))" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) { return "a name with a control character" }
        for part in name.split(separator: "/", omittingEmptySubsequences: false) {
            if part == ".." { return "a name that leaves the download folder (\(name.prefix(80)))" }
            if part.isEmpty || part == "." { return "a name with an empty or '.' component (\(name.prefix(80)))" }
        }
        return nil
    }

    static func invalid(_ reason: String) -> FerryError {
        FerryError(.metalinkInvalid, "The Metalink was not read: \(reason).")
    }
}
