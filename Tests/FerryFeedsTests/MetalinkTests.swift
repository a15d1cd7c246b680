import FerryFeeds
import FerryModel
import Foundation
import Testing

/// Metalink documents read into files, mirrors and digests (version 4 as RFC 5854 writes it,
/// version 3 as metalinker.org did), and the hostile ones refused with their reason.
@Suite struct MetalinkTests {
    static let sha256 = String(repeating: "3d", count: 32)
    static let sha1 = String(repeating: "a1", count: 20)

    /// RFC 5854's example, with the pieces and locations aria2's tests use.
    static let version4 = """
        <?xml version="1.0" encoding="UTF-8"?>
        <metalink xmlns="urn:ietf:params:xml:ns:metalink">
          <published>2009-05-15T12:23:23Z</published>
          <file name="example.ext">
            <size>14471447</size>
            <identity>Example</identity>
            <hash type="sha-1">\(sha1)</hash>
            <hash type="sha-256">\(sha256)</hash>
            <hash type="sha-224">00</hash>
            <pieces length="262144" type="sha-1">
              \((0..<56).map { _ in "<hash>\(sha1)</hash>" }.joined())
            </pieces>
            <url location="de" priority="1">ftp://ftp.example.com/example.ext</url>
            <url location="fr" priority="2">http://fr.example.com/example.ext</url>
            <url location="de" priority="3">https://de.example.com/example.ext</url>
            <url priority="1">http://example.com/example.ext</url>
            <metaurl mediatype="torrent" priority="2">http://example.com/example.ext.torrent</metaurl>
          </file>
          <file name="docs/readme.txt">
            <url>https://example.com/readme.txt</url>
          </file>
        </metalink>
        """

    static let version3 = """
        <?xml version="1.0" encoding="utf-8"?>
        <metalink version="3.0" xmlns="http://www.metalinker.org/">
          <files>
            <file name="debian.iso">
              <size>1024</size>
              <verification>
                <hash type="md5">\(String(repeating: "0f", count: 16))</hash>
                <hash type="sha1">\(sha1)</hash>
              </verification>
              <resources>
                <url type="http" location="us" preference="10">http://us.example.com/debian.iso</url>
                <url type="http" location="jp" preference="100">http://jp.example.com/debian.iso</url>
                <url type="bittorrent" preference="90">http://example.com/debian.iso.torrent</url>
              </resources>
            </file>
          </files>
        </metalink>
        """

    static func parse(_ text: String) throws -> Metalink { try Metalink.parse(Data(text.utf8)) }

    static func refusal(_ text: String) -> String {
        do {
            _ = try parse(text)
            return "read"
        } catch let error as FerryError {
            #expect(error.code == .metalinkInvalid)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    static func document(file name: String, _ inner: String = "<url>https://example.com/f</url>") -> String {
        #"<metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="\#(name)">\#(inner)</file></metalink>"#
    }

    @Test func version4sFilesMirrorsDigestsAndPieces() throws {
        let metalink = try Self.parse(Self.version4)
        #expect(metalink.files.map(\.name) == ["example.ext", "docs/readme.txt"])
        let file = metalink.files[0]
        #expect(file.size == 14_471_447 && file.fileName == "example.ext" && file.folder == nil)
        #expect(file.hashes.map(\.algorithm) == [.sha1, .sha256], "sha-224, which Ferry cannot check, is skipped")
        #expect(file.strongestHash == (try Checksum(algorithm: .sha256, hex: Self.sha256)))
        #expect(file.pieces?.length == 262_144 && file.pieces?.algorithm == .sha1 && file.pieces?.hashes.count == 56)
        #expect(file.metaurls.map(\.absoluteString) == ["http://example.com/example.ext.torrent"])
        // http(s) only, by priority, then in document order; ftp waits for FTP.
        #expect(file.sources().map(\.absoluteString) == [
            "http://example.com/example.ext", "http://fr.example.com/example.ext", "https://de.example.com/example.ext",
        ])
        // A preferred country's mirrors first, whatever their priority.
        #expect(file.sources(preferring: ["DE"]).first?.absoluteString == "https://de.example.com/example.ext")
        #expect(metalink.files[1].folder == "docs" && metalink.files[1].fileName == "readme.txt")
    }

    @Test func version3sPreferenceIsHigherFirst() throws {
        let file = try #require(try Self.parse(Self.version3).files.first)
        #expect(file.name == "debian.iso" && file.size == 1024)
        #expect(file.strongestHash?.algorithm == .sha1, "sha1 over md5")
        #expect(file.sources().map(\.absoluteString) == ["http://jp.example.com/debian.iso", "http://us.example.com/debian.iso"])
        #expect(file.metaurls.map(\.absoluteString) == ["http://example.com/debian.iso.torrent"], "a bittorrent url is a document")
    }

    @Test(arguments: [
        ("../../.bashrc", "leaves the download folder"),
        ("docs/../../etc/passwd", "leaves the download folder"),
        ("/etc/passwd", "absolute"),
        (#"..\\windows"#, "backslash"),
        ("a//b", "empty or '.' component"),
        ("./a", "empty or '.' component"),
        ("", "without a name"),
    ])
    func aNameThatWouldLeaveTheFolderRefusesTheDocument(name: String, reason: String) {
        let message = Self.refusal(Self.document(file: name))
        #expect(message.contains(reason), "\(name): \(message)")
    }

    @Test func hostileAndBrokenDocumentsAreRefusedWithTheirReason() {
        let laughs = #"<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]><metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="&b;"><url>https://x/f</url></file></metalink>"#
        let cases: [(String, String)] = [
            (laughs, "DOCTYPE"),
            ("not xml at all", "not XML"),
            (#"<rss version="2.0"><channel/></rss>"#, "root element is <rss>"),
            (#"<metalink xmlns="urn:ietf:params:xml:ns:metalink"></metalink>"#, "names no file"),
            (Self.document(file: "a", "<size>-1</size><url>https://x/a</url>"), "the size"),
            (Self.document(file: "a", #"<hash type="sha-256">abc</hash><url>https://x/a</url>"#), "sha-256 of a is not 64 hex digits"),
            (Self.document(file: "a", "<size>2048</size><pieces length=\"1024\" type=\"sha-1\"><hash>\(Self.sha1)</hash></pieces><url>https://x/a</url>"), "1 piece digests"),
            (Self.document(file: "a", #"<pieces length="1" type="sha-1"><hash>00</hash></pieces><url>https://x/a</url>"#), "piece length of 1"),
            (Self.document(file: "a", "<size>\(Int64.max)</size><pieces length=\"4096\" type=\"sha-1\"><hash>\(Self.sha1)</hash></pieces><url>https://x/a</url>"), "1 piece digests"),
            (Self.document(file: "a", ""), "no URL for a"),
            (#"<metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="a"><url>https://x/a</url></file><file name="a"><url>https://x/b</url></file></metalink>"#, "names a twice"),
            (#"<metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="a"><url>https://x/a</url>"#, "broken"),
        ]
        for (text, reason) in cases {
            let message = Self.refusal(text)
            #expect(message.contains(reason), "\(reason): \(message)")
        }
        let many = #"<metalink xmlns="urn:ietf:params:xml:ns:metalink">"#
            + (0...Metalink.maximumFiles).map { #"<file name="f\#($0)"><url>https://x/\#($0)</url></file>"# }.joined() + "</metalink>"
        #expect(Self.refusal(many).contains("more than 10000 files"))
        #expect(throws: FerryError.self) { try Metalink.parse(Data(Self.version4.utf8), maximumBytes: 100) }
    }
}
