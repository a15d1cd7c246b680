import Foundation

/// A text as a feed wrote it, before Ferry decides how to show it.
///
/// RSS never says whether a `title` or `description` is HTML, so an RSS text is HTML when it
/// looks like it (a tag or an entity reference: `&lt;p&gt;` escaped into the XML counts).
/// Atom says, with `type`; its word is taken.
struct FeedText: Hashable {
    enum Kind: Hashable {
        case plain, html, unknown
    }

    var value: String
    var kind: Kind
    /// Where relative links in the HTML point from (`xml:base`, else the feed's URL).
    var base: URL?

    init(_ value: String, kind: Kind = .unknown, base: URL? = nil) {
        self.value = value
        self.kind = kind
        self.base = base
    }

    var isHTML: Bool {
        switch kind {
        case .plain: false
        case .html: true
        case .unknown: HTMLSanitizer.looksLikeHTML(value)
        }
    }

    var isBlank: Bool { value.allSatisfy(\.isWhitespace) }

    /// One line of plain text, for titles and names.
    var line: String {
        HTMLSanitizer.singleLine(isHTML ? HTMLSanitizer.text(value) : value)
    }

    /// Sanitised HTML and plain text with line breaks, for descriptions; made in one pass.
    var rendering: HTMLSanitizer.Rendering {
        guard isHTML else {
            return HTMLSanitizer.Rendering(
                html: HTMLSanitizer.html(fromPlainText: value), text: HTMLSanitizer.tidy(plainText: value))
        }
        return HTMLSanitizer.render(value, baseURL: base, html: true, text: true)
    }

    /// A URL written in the text, resolved against `base`. Surrounding whitespace is ignored;
    /// spaces inside are percent-encoded (feeds write `My Show 1.mp3`).
    var url: URL? { FeedText.url(value, base: base) }

    static func url(_ text: String, base: URL?) -> URL? {
        let trimmed = FeedText.trim(text)
        guard !trimmed.isEmpty, let url = URL(string: trimmed, relativeTo: base)?.absoluteURL,
            url.scheme != nil
        else { return nil }
        return url
    }

    /// `itunes:explicit`: `yes`, `true` or `explicit` is explicit; `no`, `false` or `clean` is not.
    static func explicitFlag(_ text: String?) -> Bool? {
        switch text.map({ FeedText.trim($0).lowercased() }) {
        case "yes", "true", "explicit": true
        case "no", "false", "clean": false
        default: nil
        }
    }

    /// A whole number as feeds write one (`01`, ` 3 `); nil for anything else or a negative.
    static func count(_ text: String?) -> Int? {
        guard let text, let value = Int(FeedText.trim(text)), value >= 0 else {
            return nil
        }
        return value
    }

    /// The text without whitespace (Unicode's, line breaks included) at either end. Foundation's
    /// `trimmingCharacters(in:)` goes through `NSString` on Linux, which costs more than the
    /// rest of parsing an episode.
    static func trim(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        if first == scalars.startIndex, last == scalars.index(before: scalars.endIndex) { return text }
        return String(Substring(scalars[first...last]))
    }

    /// The trimmed text, or nil if nothing is left.
    static func nonEmpty(_ text: String?) -> String? {
        guard let trimmed = text.map(FeedText.trim), !trimmed.isEmpty else { return nil }
        return trimmed
    }
}
