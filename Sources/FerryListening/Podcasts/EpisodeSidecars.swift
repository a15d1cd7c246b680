import FerryKit
import Foundation

/// Reading an episode's chapters and transcript files, which come from the podcast's host and
/// are untrusted: pure functions from bytes to plain values, refusing what is not what it says.
/// (Fetching them, with a size limit, is ``PodcastLibrary/chapters(episode:)``'s.)
enum EpisodeSidecars {
    /// More than this many chapters or cues is not a real file.
    static let maximumEntries = 100_000

    /// Podcasting 2.0 JSON chapters: `{"version": …, "chapters": [{"startTime": 0, "title": …,
    /// "img": …, "url": …}]}`. Entries without a usable start are left out; sorted by start.
    static func chapters(from data: Data) throws(FerryError) -> [Chapter] {
        struct File: Decodable {
            struct Entry: Decodable {
                var startTime: Double?
                var title: String?
                var img: String?
                var url: String?
            }
            var chapters: [Entry]
        }
        guard let file = try? JSONDecoder().decode(File.self, from: data) else {
            throw FerryError(.feedInvalid, "This is not a Podcasting 2.0 chapters file (JSON with a list of chapters).")
        }
        guard file.chapters.count <= maximumEntries else { throw FerryError(.feedInvalid, "The chapters file lists too many chapters.") }
        return file.chapters.compactMap { entry -> Chapter? in
            guard let start = entry.startTime, start.isFinite, start >= 0 else { return nil }
            return Chapter(startSeconds: start, title: entry.title.map(oneLine) ?? "", imageURL: entry.img, url: entry.url)
        }
        .sorted { $0.startSeconds < $1.startSeconds }
    }

    /// A transcript in WebVTT, SRT, Podcasting 2.0 JSON or HTML (told apart by their contents:
    /// feeds' `type` attributes are often wrong).
    static func transcript(from data: Data) throws(FerryError) -> [TranscriptCue] {
        let text = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        let trimmed = text.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        let cues: [TranscriptCue]
        if trimmed.hasPrefix("{") {
            cues = try jsonCues(data)
        } else if trimmed.hasPrefix("WEBVTT") || text.contains(" --> ") {
            cues = timedCues(text)
        } else if trimmed.hasPrefix("<") {
            cues = htmlCues(text)
        } else {
            cues = []
        }
        guard !cues.isEmpty else {
            throw FerryError(.feedInvalid, "This is not a transcript Ferry can read (WebVTT, SRT, Podcasting 2.0 JSON or HTML).")
        }
        guard cues.count <= maximumEntries else { throw FerryError(.feedInvalid, "The transcript has too many lines.") }
        return cues.sorted { $0.startSeconds < $1.startSeconds }
    }

    private static func jsonCues(_ data: Data) throws(FerryError) -> [TranscriptCue] {
        struct File: Decodable {
            struct Segment: Decodable {
                var speaker: String?
                var startTime: Double?
                var endTime: Double?
                var body: String?
            }
            var segments: [Segment]
        }
        guard let file = try? JSONDecoder().decode(File.self, from: data) else {
            throw FerryError(.feedInvalid, "This is not a Podcasting 2.0 JSON transcript (a list of segments).")
        }
        return file.segments.compactMap { segment -> TranscriptCue? in
            guard let start = segment.startTime, start.isFinite, start >= 0, let body = segment.body else { return nil }
            let end = segment.endTime.flatMap { $0.isFinite && $0 >= start ? $0 : nil } ?? start
            return TranscriptCue(startSeconds: start, endSeconds: end, speaker: segment.speaker.map(oneLine), text: oneLine(body))
        }
    }

    /// WebVTT and SRT: blocks separated by blank lines, each with a `start --> end` line and
    /// the text below it (an SRT number or a VTT cue id above it is skipped).
    private static func timedCues(_ text: String) -> [TranscriptCue] {
        var cues: [TranscriptCue] = []
        for block in text.components(separatedBy: "\n\n") {
            let lines = block.split(separator: "\n", omittingEmptySubsequences: true)
            guard let timing = lines.firstIndex(where: { $0.contains("-->") }) else { continue }
            let parts = lines[timing].components(separatedBy: "-->")
            guard parts.count == 2, let start = timestamp(parts[0]),
                let end = timestamp(String(parts[1].split(separator: " ").first ?? ""))
            else { continue }
            var speaker: String?
            var words: [String] = []
            for line in lines[(timing + 1)...] {
                var line = String(line)
                // `<v Name>` names the speaker in WebVTT.
                if let voice = line.range(of: "<v "), let close = line[voice.upperBound...].firstIndex(of: ">") {
                    speaker = String(line[voice.upperBound..<close]).trimmingCharacters(in: .whitespaces)
                    line.removeSubrange(voice.lowerBound...close)
                }
                words.append(decodeEntities(stripTags(line)))
            }
            let body = oneLine(words.joined(separator: " "))
            guard !body.isEmpty else { continue }
            cues.append(TranscriptCue(startSeconds: start, endSeconds: max(end, start), speaker: speaker, text: body))
        }
        return cues
    }

    /// The Podcasting 2.0 HTML transcript: `<cite>Speaker:</cite> <time>0:53</time> <p>words</p>`,
    /// a cue for each paragraph at the time above it (a paragraph without one follows the last).
    /// A line ends where the next begins. Without a single time it is not one (an error page).
    private static func htmlCues(_ text: String) -> [TranscriptCue] {
        var cues: [TranscriptCue] = []
        var speaker: String?
        var start = 0.0
        var timed = false
        var cursor = text.startIndex
        // Each element of interest is read whole from its opening tag to its closing one.
        while let open = text[cursor...].range(of: "<") {
            guard let close = text[open.upperBound...].firstIndex(of: ">") else { break }
            let name = text[open.upperBound..<close].prefix { $0.isLetter }.lowercased()
            cursor = text.index(after: close)
            guard ["p", "time", "cite"].contains(name), let end = text[cursor...].range(of: "</\(name)>", options: .caseInsensitive) else { continue }
            let inner = oneLine(decodeEntities(stripTags(String(text[cursor..<end.lowerBound]))))
            cursor = end.upperBound
            switch name {
            case "cite": speaker = inner.hasSuffix(":") ? String(inner.dropLast()) : inner
            case "time":
                if let seconds = timestamp(inner) {
                    start = seconds
                    timed = true
                }
            default:
                guard !inner.isEmpty else { continue }
                if let last = cues.last, last.endSeconds == last.startSeconds { cues[cues.count - 1].endSeconds = max(start, last.startSeconds) }
                cues.append(TranscriptCue(startSeconds: start, endSeconds: start, speaker: speaker.flatMap { $0.isEmpty ? nil : $0 }, text: inner))
            }
        }
        return timed ? cues : []
    }

    /// `&amp;`, `&#39;`, `&#x2019;` and the few named entities transcripts use.
    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "rsquo": "\u{2019}", "lsquo": "\u{2018}",
                     "rdquo": "\u{201D}", "ldquo": "\u{201C}", "hellip": "\u{2026}", "mdash": "\u{2014}", "ndash": "\u{2013}"]
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semicolon = after.prefix(10).firstIndex(of: ";") {
                let entity = after[..<semicolon]
                var decoded: String?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    decoded = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String(Character($0)) }
                } else if entity.hasPrefix("#") {
                    decoded = UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init).map { String(Character($0)) }
                } else {
                    decoded = named[entity.lowercased()]
                }
                if let decoded {
                    out += decoded
                    rest = after[after.index(after: semicolon)...]
                    continue
                }
            }
            out += "&"
            rest = after
        }
        return out + rest
    }

    /// `hh:mm:ss.ttt`, `mm:ss.ttt` (WebVTT) or `hh:mm:ss,ttt` (SRT), in seconds.
    static func timestamp(_ text: String) -> Double? {
        let fields = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: ".").split(separator: ":")
        guard (2...3).contains(fields.count) else { return nil }
        var seconds = 0.0
        for (index, field) in fields.enumerated() {
            guard let value = Double(field), value.isFinite, value >= 0 else { return nil }
            if index < fields.count - 1, value != value.rounded() { return nil }
            seconds = seconds * 60 + value
        }
        return seconds
    }

    private static func stripTags(_ line: String) -> String {
        var out = ""
        var inTag = false
        for character in line {
            if character == "<" { inTag = true } else if character == ">" && inTag { inTag = false } else if !inTag { out.append(character) }
        }
        return out
    }

    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
