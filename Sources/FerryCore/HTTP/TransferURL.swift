import FerryModel
import Foundation

/// Checks a URL someone asked Ferry to download, before anything is journaled.
package enum TransferURL {
    /// - Returns: the URL, trimmed, if it is an absolute http or https URL with a host.
    /// - Throws: `invalid_url` or `unsupported_scheme`, with a message that quotes the input.
    package static func validate(_ text: String) throws(FerryError) -> URL {
        let trimmed = String(text.trimmingWhitespace())
        let shown = trimmed.count > 120 ? trimmed.prefix(117) + "..." : trimmed
        guard !trimmed.isEmpty else { throw FerryError(.invalidURL, "The URL is empty.") }
        guard trimmed.utf8.count <= 8192 else { throw FerryError(.invalidURL, "The URL is longer than 8192 bytes.") }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " }) else {
            throw FerryError(.invalidURL, "'\(shown)' is not a valid URL: it contains spaces or control characters.")
        }
        guard let components = URLComponents(string: trimmed), let scheme = components.scheme?.lowercased() else {
            throw FerryError(.invalidURL, "'\(shown)' is not a valid URL; give a full address like https://example.com/file.mp3.")
        }
        guard scheme == "http" || scheme == "https" else {
            throw FerryError(.unsupportedScheme, "'\(shown)' uses \(scheme):, but Ferry downloads only http and https URLs.")
        }
        guard let host = components.host, !host.isEmpty, let url = components.url else {
            throw FerryError(.invalidURL, "'\(shown)' is not a valid URL: it has no host name.")
        }
        return url
    }
}
