import Foundation

/// The file name a server suggests in `Content-Disposition` (RFC 6266), preferring the
/// RFC 8187 `filename*=UTF-8''...` form. Returns the raw name: callers must sanitise it.
public enum ContentDisposition {
    public static func fileName(_ header: String) -> String? {
        guard header.utf8.count <= 4096 else { return nil }
        var plain: String?
        var extended: String?
        for (key, value) in parameters(header) {
            switch key {
            // An empty `filename*` says nothing: keep the plain `filename` as the fallback.
            case "filename*": extended = decodeExtended(value).flatMap { $0.isEmpty ? nil : $0 } ?? extended
            case "filename": plain = value
            default: continue
            }
        }
        let name = extended ?? plain
        return name?.isEmpty == false ? name : nil
    }

    /// `attachment; filename="a;b.mp3"; filename*=UTF-8''a%20b.mp3` → key/value pairs, keys
    /// lower-cased, quoted strings unescaped.
    static func parameters(_ header: String) -> [(String, String)] {
        var result: [(String, String)] = []
        var chars = Substring(header)
        // Skip the disposition type.
        guard let firstSemicolon = chars.firstIndex(of: ";") else { return [] }
        chars = chars[chars.index(after: firstSemicolon)...]
        while !chars.isEmpty {
            chars = chars.drop(while: { $0 == " " || $0 == "\t" || $0 == ";" })
            guard let equals = chars.firstIndex(of: "=") else { break }
            let key = chars[..<equals].trimmingWhitespace().lowercased()
            chars = chars[chars.index(after: equals)...].drop(while: { $0 == " " || $0 == "\t" })
            var value = ""
            if chars.first == "\"" {
                chars = chars.dropFirst()
                var escaped = false
                while let c = chars.first {
                    chars = chars.dropFirst()
                    if escaped {
                        value.append(c)
                        escaped = false
                    } else if c == "\\" {
                        escaped = true
                    } else if c == "\"" {
                        break
                    } else {
                        value.append(c)
                    }
                }
                chars = chars.drop(while: { $0 != ";" })
            } else {
                let end = chars.firstIndex(of: ";") ?? chars.endIndex
                value = String(chars[..<end].trimmingWhitespace())
                chars = chars[end...]
            }
            result.append((key, value))
        }
        return result
    }

    /// `UTF-8'en'%e2%82%ac%20rates.mp3` → `€ rates.mp3`. Only UTF-8 and ISO-8859-1 are decoded.
    static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let charset = parts[0].lowercased()
        guard let bytes = percentDecodedBytes(parts[2]) else { return nil }
        switch charset {
        case "utf-8": return String(bytes: bytes, encoding: .utf8)
        case "iso-8859-1": return String(bytes: bytes, encoding: .isoLatin1)
        default: return nil
        }
    }

    private static func percentDecodedBytes(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
