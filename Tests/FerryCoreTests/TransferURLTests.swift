import FerryKit
import Foundation
@testable import FerryCore
import Testing

@Suite struct TransferURLTests {
    func failure(_ text: String) -> FerryError? {
        do {
            _ = try TransferURL.validate(text)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("https://example.com/file.mp3", "https://example.com/file.mp3"),
        ("http://example.com", "http://example.com"),
        ("http://example.com/", "http://example.com/"),
        ("  https://example.com/trimmed.mp3 \n", "https://example.com/trimmed.mp3"),
        ("HTTPS://Example.COM/Case.mp3", "HTTPS://Example.COM/Case.mp3"),
        ("https://example.com:8443/f?a=1&b=2#frag", "https://example.com:8443/f?a=1&b=2#frag"),
        ("https://user:secret@example.com/private.mp3", "https://user:secret@example.com/private.mp3"),
        ("http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ("https://example.com/a%20b.mp3", "https://example.com/a%20b.mp3"),
        // Non-ASCII is percent-encoded, so a bidi override never reaches the request raw.
        ("https://example.com/été.mp3", "https://example.com/%C3%A9t%C3%A9.mp3"),
        ("https://example.com/a\u{202E}3pm.exe", "https://example.com/a%E2%80%AE3pm.exe"),
    ])
    func accepts(_ text: String, _ expected: String) throws {
        let url = try TransferURL.validate(text)
        #expect(url.absoluteString == expected)
        #expect(url.host?.isEmpty == false)
    }

    @Test(arguments: ["", "   ", "\n\t \r\n", "\u{00A0}"])
    func refusesEmpty(_ text: String) {
        let error = failure(text)
        #expect(error?.code == .invalidURL)
        #expect(error?.message == "The URL is empty.")
    }

    @Test(arguments: [
        "https://example.com/a b.mp3",
        "https://exa mple.com/x",
        "https:// example.com/x",
        "https://example.com/a\tb",
        "https://example.com/a\nb",
        "https://example.com/a\r\nHost: evil.example",
        "https://example.com/\u{0}x",
        "https://example.com/\u{7F}",
        "https://example.com/\u{85}x",
        "https://example.com/\u{1B}[31m",
    ])
    func refusesSpacesAndControlCharacters(_ text: String) {
        let error = failure(text)
        #expect(error?.code == .invalidURL)
        #expect(error?.message.contains("contains spaces or control characters") == true)
    }

    @Test func capsTheLengthAt8192Bytes() throws {
        let prefix = "https://example.com/"
        let atCap = prefix + String(repeating: "a", count: 8192 - prefix.utf8.count)
        #expect(try TransferURL.validate(atCap).absoluteString == atCap)

        let error = failure(atCap + "a")
        #expect(error?.code == .invalidURL)
        #expect(error?.message == "The URL is longer than 8192 bytes.")
        // Bytes, not characters: 4,100 "é" are 8,200 bytes.
        #expect(failure(prefix + String(repeating: "é", count: 4100))?.message == "The URL is longer than 8192 bytes.")
    }

    @Test(arguments: ["example.com/file.mp3", "//example.com/file.mp3", "/local/file.mp3", "file.mp3", "?q=1"])
    func refusesRelativeReferences(_ text: String) {
        let error = failure(text)
        #expect(error?.code == .invalidURL)
        #expect(error?.message == "'\(text)' is not a valid URL; give a full address like https://example.com/file.mp3.")
    }

    @Test(arguments: [
        ("javascript:alert(1)", "javascript"),
        ("JavaScript:alert(document.cookie)", "javascript"),
        ("ftp://ftp.example.com/file.mp3", "ftp"),
        ("file:///etc/passwd", "file"),
        ("data:text/html,<script>alert(1)</script>", "data"),
        ("mailto:someone@example.com", "mailto"),
        ("ws://example.com/socket", "ws"),
        ("gopher://example.com/", "gopher"),
    ])
    func refusesOtherSchemes(_ text: String, _ scheme: String) {
        let error = failure(text)
        #expect(error?.code == .unsupportedScheme)
        #expect(error?.message == "'\(text)' uses \(scheme):, but Ferry downloads only http and https URLs.")
    }

    @Test(arguments: ["http://", "https://", "https:///path/file.mp3", "http:/one-slash", "https:", "https://:443/x", "http://?q=1"])
    func refusesURLsWithoutHost(_ text: String) {
        let error = failure(text)
        #expect(error?.code == .invalidURL)
        #expect(error?.message == "'\(text)' is not a valid URL: it has no host name.")
    }

    @Test func quotesLongInputShortened() {
        let text = "ftp://example.com/" + String(repeating: "x", count: 200)
        let error = failure(text)
        #expect(error?.code == .unsupportedScheme)
        let shown = String(text.prefix(117)) + "..."
        #expect(error?.message == "'\(shown)' uses ftp:, but Ferry downloads only http and https URLs.")
    }

    @Test func quotesTrimmedInput() {
        #expect(failure("  ftp://x.example/f  ")?.message == "'ftp://x.example/f' uses ftp:, but Ferry downloads only http and https URLs.")
    }
}
