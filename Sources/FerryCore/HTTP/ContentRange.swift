/// A parsed `Content-Range` response header (RFC 9110 §14.4): `bytes 100-199/1000`,
/// `bytes 100-199/*` or, on a 416, `bytes */1000`.
public struct ContentRange: Sendable, Hashable {
    /// The bytes this response carries, or nil for the unsatisfied form `bytes */N`.
    public var range: ClosedRange<Int64>?
    /// The complete length, or nil when the server sent `*`.
    public var total: Int64?

    public init(range: ClosedRange<Int64>?, total: Int64?) {
        self.range = range
        self.total = total
    }

    /// Parses the header; nil for anything malformed (a hostile server cannot crash or fool it).
    public init?(_ header: String) {
        var text = Substring(header.trimmingWhitespace())
        guard text.count <= 200, text.lowercased().hasPrefix("bytes ") else { return nil }
        text = text.dropFirst(6).drop(while: { $0 == " " })
        guard let slash = text.firstIndex(of: "/") else { return nil }
        let spec = text[..<slash]
        let totalText = text[text.index(after: slash)...]

        if totalText == "*" {
            total = nil
        } else {
            guard let value = Self.number(totalText) else { return nil }
            total = value
        }
        if spec == "*" {
            guard total != nil else { return nil }
            range = nil
            return
        }
        guard let dash = spec.firstIndex(of: "-"),
            let first = Self.number(spec[..<dash]),
            let last = Self.number(spec[spec.index(after: dash)...]),
            first <= last
        else { return nil }
        if let total, last >= total { return nil }
        range = first...last
    }

    /// Digits only, no sign, no overflow.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(text)
    }
}

extension StringProtocol {
    /// The text without leading and trailing whitespace.
    package func trimmingWhitespace() -> Substring {
        let s = Substring(self)
        guard let start = s.firstIndex(where: { !$0.isWhitespace }) else { return s[s.endIndex...] }
        let end = s.lastIndex(where: { !$0.isWhitespace })!
        return s[start...end]
    }
}
