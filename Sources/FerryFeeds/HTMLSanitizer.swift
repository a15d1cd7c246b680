import Foundation

/// Makes feed HTML safe to put in Ferry's web app (DESIGN: "the web app shows it as text or
/// sanitised HTML, never raw"), or turns it into plain text.
///
/// The output is built, not filtered: it contains only tags this type writes itself, from an
/// allowlist, without attributes except a checked `href`; every piece of text is escaped. So
/// whatever the tokenizer makes of `<scr<script>ipt>` or an unclosed tag, nothing executable can
/// come out. Tags are balanced, so a description cannot leave an open `<a>` or `<blockquote>`
/// that swallows the rest of the page.
public enum HTMLSanitizer {
    /// Deeper nesting is unwrapped: no real show notes need it, and it keeps output bounded.
    static let maximumDepth = 64

    /// Sanitised HTML: the allowlist (`p`, `br`, `a`, `b`, `strong`, `i`, `em`, `u`, `ul`, `ol`,
    /// `li`, `blockquote`, `code`, `pre`, `h1`–`h6`, `hr`) is kept; `script`, `style`, `iframe`,
    /// `object` and the like are dropped with their content; any other tag (`span`, `div`,
    /// `img`, `font`, ...) is dropped and its text kept; text is escaped.
    ///
    /// - Parameters:
    ///   - html: untrusted HTML, e.g. an episode's `content:encoded`.
    ///   - baseURL: resolves relative links; without it, relative links are unwrapped.
    /// - Returns: HTML in which links are `http`, `https` or `mailto` only and carry
    ///   `rel="noopener noreferrer"`. Images are never kept (they are tracking pixels).
    public static func sanitize(_ html: String, baseURL: URL? = nil) -> String {
        render(html, baseURL: baseURL, html: true, text: false).html
    }

    /// The link an `href` may keep: `http`, `https` or `mailto`, after decoding entities and
    /// removing the tabs, newlines and controls browsers ignore inside URLs (so that
    /// `jav&#x09;ascript:` is seen as `javascript:`). Relative links are resolved against
    /// `baseURL` and must then be `http` or `https`.
    static func safeLink(_ raw: String, baseURL: URL?) -> String? {
        var bytes: [UInt8] = []
        for byte in decodeEntities(Array(raw.utf8)[...]) where byte > 0x1F && byte != 0x7F {
            bytes.append(byte)
        }
        while bytes.last == 0x20 { bytes.removeLast() }
        while bytes.first == 0x20 { bytes.removeFirst() }
        let text = String(decoding: bytes, as: UTF8.self)
        guard !text.isEmpty else { return nil }
        if isPlainAbsoluteLink(bytes) { return text }
        let url: URL?
        if let scheme = scheme(of: text) {
            guard ["http", "https", "mailto"].contains(scheme) else { return nil }
            url = URL(string: text)
        } else if let baseURL {
            url = URL(string: text, relativeTo: baseURL)?.absoluteURL
        } else {
            return nil
        }
        guard let url, let scheme = url.scheme?.lowercased(), ["http", "https", "mailto"].contains(scheme) else {
            return nil
        }
        return url.absoluteString
    }

    /// The common case, decided without parsing a URL: `http://`, `https://` or `mailto:` and
    /// only printable ASCII after it.
    private static func isPlainAbsoluteLink(_ bytes: [UInt8]) -> Bool {
        guard hasPrefix(bytes, "http://") || hasPrefix(bytes, "https://") || hasPrefix(bytes, "mailto:") else {
            return false
        }
        var index = 0
        while index < bytes.count {
            if bytes[index] <= 0x20 || bytes[index] >= 0x7F { return false }
            index += 1
        }
        return true
    }

    /// Whether `bytes` start with the lowercase ASCII `prefix`, in any case.
    private static func hasPrefix(_ bytes: [UInt8], _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        var index = 0
        while index < count {
            let byte = bytes[index]
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if lowered != prefix.utf8Start[index] { return false }
            index += 1
        }
        return true
    }

    /// The lowercased scheme, if the text starts with one (`scheme:` before any `/`, `?` or `#`).
    static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let candidate = text[..<colon]
        guard let first = candidate.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
            candidate.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0))
            })
        else { return nil }
        return candidate.lowercased()
    }
}
