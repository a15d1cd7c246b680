import Foundation

/// `itunes:duration`: `HH:MM:SS`, `MM:SS` or plain seconds, any of them with a fractional last
/// part, as podcast feeds write it.
public enum EpisodeDuration {
    /// Seconds, or nil for anything else (`1:75`, `-5`, `45 min`, empty). Leading and trailing
    /// whitespace is ignored. Only the first part may be 60 or more (`90:00` is 90 minutes).
    public static func parse(_ text: String) -> Double? {
        let parts = FeedText.trim(text)
            .split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (index, part) in parts.enumerated() {
            let isLast = index == parts.count - 1
            let dots = part.count(where: { $0 == "." })
            guard part.contains(where: \.isASCIIDigit),
                part.allSatisfy({ $0.isASCIIDigit || $0 == "." }),
                dots == 0 || (isLast && dots == 1),
                let value = Double(part)
            else { return nil }
            if index > 0 && value >= 60 { return nil }
            total = total * 60 + value
        }
        return total.isFinite ? total : nil
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
