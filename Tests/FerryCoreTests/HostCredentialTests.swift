import FerryKit
import Foundation
import Testing

/// The store's host names, and a URL's password hidden wherever a transfer is shown.
@Suite struct HostCredentialTests {
    @Test(arguments: [
        ("Files.Example.COM", "files.example.com"), (" a.example:8443 ", "a.example:8443"), ("127.0.0.1", "127.0.0.1"),
        ("[::1]:8443", "[::1]:8443"),
    ])
    func hosts(_ text: String, _ normalized: String) throws {
        #expect(try HostCredential.normalizedHost(text) == normalized)
    }

    @Test(arguments: ["https://a.example/", "a.example/path", "ann@a.example", "a.example:0", "a.example:99999", "a example", ""])
    func notHosts(_ text: String) {
        #expect(throws: FerryError.self) { try HostCredential.normalizedHost(text) }
    }

    @Test(arguments: [
        ("https://ann:s3cret@a.example/f", "https://ann:<redacted>@a.example/f"),
        ("https://ann@a.example/f", "https://ann@a.example/f"),
        ("https://a.example:8443/x@y:z", "https://a.example:8443/x@y:z"),
        ("http://u:p%40ss@a.example:80?q=a@b", "http://u:<redacted>@a.example:80?q=a@b"),
        ("https://a.example/f", "https://a.example/f"),
    ])
    func urlPasswords(_ url: String, _ shown: String) {
        #expect(HostCredential.redactingPassword(in: url) == shown)
    }
}
