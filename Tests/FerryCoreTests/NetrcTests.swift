import FerryKit
import Foundation
@testable import FerryCore
import Testing

@Suite struct NetrcTests {
    @Test func entriesDefaultAndMacros() throws {
        let netrc = try Netrc(parsing: """
            # curl's comment line
            machine files.example.com login ann password "pass word \\"quoted\\""

            macdef init
            cd /pub
            get file password nonsense

            machine other.example.com
              login bob
              password b0b account acct
            default login anonymous password guest
            """)
        #expect(netrc.entries.count == 3)
        #expect(netrc.entry(host: "FILES.example.com")?.password == #"pass word "quoted""#)
        #expect(netrc.entry(host: "other.example.com") == .init(machine: "other.example.com", login: "bob", password: "b0b", account: "acct"))
        #expect(netrc.entry(host: "unknown.example")?.login == "anonymous")
    }

    @Test func loginPicksTheEntry() throws {
        let netrc = try Netrc(parsing: "machine h login a password 1\nmachine h login b password 2\n")
        #expect(netrc.entry(host: "h")?.password == "1")
        #expect(netrc.entry(host: "h", login: "b")?.password == "2")
        #expect(netrc.entry(host: "h", login: "c") == nil)
    }

    @Test(arguments: [
        ("machine h login a password", "line 1: 'password' without a value"),
        ("login a", "line 1: 'login' before any 'machine'"),
        ("machine h\nlogin a\npasswd x", "line 3: a word that is not a .netrc keyword"),
        ("machine h password \"open", "line 1: a quoted token is not closed"),
        ("machine", "'machine' without a host name"),
    ])
    func garbage(_ text: String, _ message: String) {
        #expect {
            try Netrc(parsing: text, file: "/x/.netrc")
        } throws: { error in
            (error as? FerryError)?.message.contains("/x/.netrc, \(message)") == true || (error as? FerryError)?.message.contains(message) == true
        }
    }

    /// A file that is not a .netrc (say, a secret of the daemon's named as one) is not quoted back.
    @Test func garbageIsNotQuotedBack() {
        #expect {
            try Netrc(parsing: "s3cr3t-t0ken-value\n")
        } throws: { error in
            (error as? FerryError)?.message.contains("s3cr3t") == false
        }
    }

    @Test func refusesAFileOthersCanRead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("netrc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("netrc").path
        try Data("machine h login a password p\n".utf8).write(to: URL(fileURLWithPath: file))
        chmod(file, 0o644)
        #expect {
            try Netrc.load(path: file)
        } throws: { error in
            (error as? FerryError)?.message.contains("can be read by other users (mode 644)") == true
        }
        chmod(file, 0o600)
        #expect(try Netrc.load(path: file).entry(host: "h")?.password == "p")
        #expect(throws: FerryError.self) { try Netrc.load(path: folder.appendingPathComponent("missing").path) }
    }
}
