extension HTMLSanitizer {
    /// Plain text from HTML: tags removed (with the content of `script`, `style` and the like),
    /// entities decoded, runs of whitespace (and no-break spaces) collapsed to one space, a line
    /// break for `br`, `li` and `div`, a blank line between paragraphs and headings, and no
    /// whitespace at either end.
    public static func text(_ html: String) -> String {
        render(html, baseURL: nil, html: false, text: true).text
    }

    /// Whether a text from a feed should be read as HTML: it has something like a tag
    /// (`<p`, `</`, `<!--`) or an entity reference that decodes (`&amp;`, `&#233;`).
    /// `Fish & Chips <3` is plain text.
    static func looksLikeHTML(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        for index in bytes.indices {
            switch bytes[index] {
            case 0x3C:  // `<`
                guard index + 1 < bytes.count else { continue }
                let next = bytes[index + 1]
                if HTMLTokenizer.isLetter(next) || next == 0x2F || next == 0x21 { return true }  // `/` `!`
            case 0x26:  // `&`
                if reference(in: bytes[...], at: index) != nil { return true }
            default:
                continue
            }
        }
        return false
    }

    /// HTML for a text that is not HTML: escaped, lines joined with `<br>`, blank lines making
    /// paragraphs.
    static func html(fromPlainText text: String) -> String {
        paragraphs(of: text)
            .map { "<p>" + $0.map { escape($0) }.joined(separator: "<br>") + "</p>" }
            .joined()
    }

    /// A plain text tidied like ``text(_:)`` tidies HTML, but keeping its line breaks.
    static func tidy(plainText text: String) -> String {
        paragraphs(of: text).map { $0.joined(separator: "\n") }.joined(separator: "\n\n")
    }

    /// One line of text: every run of whitespace, line breaks included, becomes one space.
    static func singleLine(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// The paragraphs of a plain text (split at blank lines), each a list of lines whose
    /// whitespace is collapsed.
    private static func paragraphs(of text: String) -> [[String]] {
        var result: [[String]] = []
        var current: [String] = []
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let tidy = singleLine(String(line))
            if tidy.isEmpty {
                if !current.isEmpty { result.append(current) }
                current = []
            } else {
                current.append(tidy)
            }
        }
        if !current.isEmpty { result.append(current) }
        return result
    }
}

