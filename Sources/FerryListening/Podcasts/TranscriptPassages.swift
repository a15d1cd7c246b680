import FerryKit
import Foundation

/// What a transcript is indexed as: its cues joined into passages of about a sentence. Hosts
/// cut lines anywhere (mid-sentence in WebVTT, one word per segment in JSON), and a phrase
/// must be found within one indexed line; a passage starts where its first cue does, so a hit
/// opens the episode a moment before the words.
enum TranscriptPassages {
    /// A passage ends at a sentence's end once it has this many characters…
    static let sentenceLength = 80
    /// …and, whatever it is, at this many characters, this many seconds, or another speaker.
    static let maximumLength = 240
    static let maximumSeconds = 30.0

    static func of(_ cues: [TranscriptCue]) -> [TranscriptCue] {
        var passages: [TranscriptCue] = []
        var current: TranscriptCue?
        for cue in cues {
            if var passage = current, passage.speaker == cue.speaker, passage.text.count + cue.text.count < maximumLength,
                cue.startSeconds - passage.startSeconds < maximumSeconds,
                !(passage.text.count >= sentenceLength && passage.text.last.map { ".?!…".contains($0) } == true)
            {
                passage.text += " " + cue.text
                passage.endSeconds = max(passage.endSeconds, cue.endSeconds)
                current = passage
            } else {
                if let passage = current { passages.append(passage) }
                current = cue
            }
        }
        if let passage = current { passages.append(passage) }
        return passages
    }
}
