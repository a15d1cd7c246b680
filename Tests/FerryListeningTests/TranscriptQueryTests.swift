import FerryKit
import Foundation
import Testing

import FerryCore
@testable import FerryListening

/// What a listener types into "search what was said", as both databases get it, and the
/// snippet that shows a hit's words.
@Suite struct TranscriptQueryTests {
    @Test func wordsAndQuotedPhrasesFoldedAndUnique() throws {
        let query = try TranscriptQuery(#"Café  "the Big  ONE" café; l'été"#)
        #expect(query.phrases == [["cafe"], ["the", "big", "one"], ["l"], ["ete"]])
        #expect(query.fts5 == #""cafe" AND "the big one" AND "l" AND "ete""#)
        #expect(query.tsquery == "('cafe') & ('the' <-> 'big' <-> 'one') & ('l') & ('ete')")
    }

    /// Nothing typed reaches either database as syntax: quotes, operators and column filters are
    /// words' separators.
    @Test func syntaxIsNotPassedOn() throws {
        let query = try TranscriptQuery(#"body:x* OR (NEAR "a" ') & !b' -- ;DROP"#)
        #expect(query.phrases.allSatisfy { $0.allSatisfy { $0.allSatisfy { $0.isLetter || $0.isNumber } } })
        #expect(query.phrases.contains(["or"]) && query.phrases.contains(["a"]))
        let unclosed = try TranscriptQuery(#"say "hello world"#)
        #expect(unclosed.phrases == [["say"], ["hello", "world"]])
    }

    @Test(arguments: ["", "   ", #""  ""#, "!!! ???", String(repeating: "x", count: 201), (1...13).map { "w\($0)" }.joined(separator: " ")])
    func notASearchIsRefused(text: String) {
        #expect(throws: FerryError.self) { try TranscriptQuery(text) }
    }

    @Test func aSnippetMarksTheWordsAndPhrases() throws {
        let query = try TranscriptQuery(#"moon "big rocket""#)
        let parts = query.snippet("The BIG rocket went to the Moon; no big deal, no rocket.")
        #expect(parts.map(\.text).joined() == "The BIG rocket went to the Moon; no big deal, no rocket.")
        #expect(parts.filter(\.match).map(\.text) == ["BIG rocket", "Moon"])
    }

    /// A long passage is cut around its first match, with "…" where it goes on.
    @Test func aLongLineIsCutAroundTheMatch() throws {
        let words = (1...100).map { "w\($0)" }
        let parts = try TranscriptQuery("w50").snippet(words.joined(separator: " "), width: 10)
        let text = parts.map(\.text).joined()
        #expect(text.hasPrefix("…") && text.hasSuffix("…") && text.contains("w47") && !text.contains("w40 "), "\(text)")
        #expect(parts.filter(\.match).map(\.text) == ["w50"])
        let start = try TranscriptQuery("w1").snippet(words.joined(separator: " "), width: 10).map(\.text).joined()
        #expect(start.hasPrefix("w1 ") && start.hasSuffix("…"))
    }

    @Test func cuesJoinIntoPassagesOfAboutASentence() {
        // One word per segment (as the namespace's JSON example has it), two speakers.
        var cues = ["I", "am", "your", "father."].enumerated().map {
            TranscriptCue(startSeconds: Double($0.offset), endSeconds: Double($0.offset) + 0.5, speaker: "Vader", text: $0.element)
        }
        cues.append(TranscriptCue(startSeconds: 5, endSeconds: 6, speaker: "Luke", text: "No."))
        let sentence = String(repeating: "word ", count: 20) + "end."
        cues += (0..<3).map { TranscriptCue(startSeconds: 10 + Double($0), endSeconds: 11 + Double($0), speaker: "Luke", text: sentence) }
        cues.append(TranscriptCue(startSeconds: 100, endSeconds: 101, speaker: "Luke", text: "Much later"))
        let passages = TranscriptPassages.of(cues)
        // A short line joins the next; a long sentence ends its passage; so does another speaker.
        #expect(passages.map(\.text) == ["I am your father.", "No. " + sentence, sentence, sentence, "Much later"])
        #expect(passages[0].startSeconds == 0 && passages[0].endSeconds == 3.5 && passages[1].startSeconds == 5)
        // A long pause ends one too.
        let paused = TranscriptPassages.of([
            TranscriptCue(startSeconds: 0, endSeconds: 1, text: "before"), TranscriptCue(startSeconds: 40, endSeconds: 41, text: "after"),
        ])
        #expect(paused.map(\.text) == ["before", "after"])
    }
}
