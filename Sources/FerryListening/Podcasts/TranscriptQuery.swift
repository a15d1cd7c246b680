import FerryCore
import FerryKit
import Foundation

/// What a listener typed into "search what was said", read into words and quoted phrases that
/// must all be in one line of a transcript. Pure: both databases get their query from it, and
/// the snippet's matches are found by the same rules, so SQLite's FTS5 and PostgreSQL's text
/// search answer alike and nothing the user types reaches either as syntax.
package struct TranscriptQuery: Sendable, Hashable {
    /// Each phrase's words, folded (lower case, without diacritics); a lone word is a phrase of one.
    package let phrases: [[String]]

    package static let maximumLength = 200
    package static let maximumPhrases = 12

    /// - Throws: `invalid_request` when there is no word to look for, or too much.
    package init(_ text: String) throws(FerryError) {
        guard text.count <= Self.maximumLength else {
            throw FerryError(.invalidRequest, "A search is at most \(Self.maximumLength) characters.")
        }
        var phrases: [[String]] = []
        // Outside quotes each word stands alone; inside, the words make one phrase.
        for (index, part) in text.split(separator: "\"", omittingEmptySubsequences: false).enumerated() {
            let words = Self.words(String(part))
            guard !words.isEmpty else { continue }
            if index % 2 == 1 { phrases.append(words) } else { phrases += words.map { [$0] } }
        }
        var unique: [[String]] = []
        for phrase in phrases where !unique.contains(phrase) { unique.append(phrase) }
        guard !unique.isEmpty else {
            throw FerryError(.invalidRequest, "Type a word to look for (letters or digits), or \"a phrase\" in quotes.")
        }
        guard unique.count <= Self.maximumPhrases else {
            throw FerryError(.invalidRequest, "A search has at most \(Self.maximumPhrases) words or phrases.")
        }
        phrases = unique
        self.phrases = phrases
    }

    /// The words of a text as both databases' tokenizers see them: runs of letters and digits,
    /// folded.
    package static func words(_ text: String) -> [String] {
        text.split { !($0.isLetter || $0.isNumber) }.map(fold)
    }

    static func fold(_ word: Substring) -> String {
        word.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    /// For FTS5's MATCH: each phrase quoted (its words are letters and digits only), all required.
    package var fts5: String {
        phrases.map { "\"" + $0.joined(separator: " ") + "\"" }.joined(separator: " AND ")
    }

    /// For PostgreSQL's `to_tsquery('simple', …)`: phrases with `<->`, all required.
    package var tsquery: String {
        phrases.map { phrase in "(" + phrase.map { "'\($0)'" }.joined(separator: " <-> ") + ")" }.joined(separator: " & ")
    }

    /// The line a hit was found in, cut to about `width` words around its first match, in
    /// parts that say which words matched.
    package func snippet(_ text: String, width: Int = 24) -> [TranscriptHit.SnippetPart] {
        // The line's words with where they are, to find phrases and keep the text between them.
        var spans: [(range: Range<String.Index>, folded: String)] = []
        var start: String.Index?
        for index in text.indices {
            let inWord = text[index].isLetter || text[index].isNumber
            if inWord, start == nil { start = index }
            if !inWord, let from = start {
                spans.append((from..<index, Self.fold(text[from..<index])))
                start = nil
            }
        }
        if let from = start { spans.append((from..<text.endIndex, Self.fold(text[from...]))) }
        var matched = Array(repeating: false, count: spans.count)
        for phrase in phrases where phrase.count <= spans.count {
            for first in 0...(spans.count - phrase.count) where (0..<phrase.count).allSatisfy({ spans[first + $0].folded == phrase[$0] }) {
                for offset in 0..<phrase.count { matched[first + offset] = true }
            }
        }
        // A window of words around the first match; "…" where the line goes on.
        let firstMatch = matched.firstIndex(of: true) ?? 0
        let low = spans.count <= width ? 0 : max(0, min(firstMatch - width / 3, spans.count - width))
        let high = min(spans.count, low + width)
        guard low < high else { return [.init(text)] }
        var parts: [TranscriptHit.SnippetPart] = []
        func add(_ piece: Substring, _ match: Bool) {
            guard !piece.isEmpty else { return }
            if let last = parts.last, last.match == match { parts[parts.count - 1].text += piece } else { parts.append(.init(String(piece), match: match)) }
        }
        var cursor = low == 0 ? text.startIndex : spans[low].range.lowerBound
        if low > 0 { add("…", false) }
        for index in low..<high {
            let gap = text[cursor..<spans[index].range.lowerBound]
            // Matched words with only spaces between them are one mark (a phrase's words).
            add(gap, index > low && matched[index - 1] && matched[index] && gap.allSatisfy(\.isWhitespace))
            add(text[spans[index].range], matched[index])
            cursor = spans[index].range.upperBound
        }
        add(high == spans.count ? text[cursor...] : "…", false)
        return parts
    }
}
