#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// JSON written byte by byte, exactly as `FerryJSON.encoder()` writes it (sorted keys are the
/// caller's order, ISO 8601 dates in whole seconds, unescaped slashes), without JSONEncoder's
/// generic machinery: for the hot paths, the transfer list and the journal's events.
package struct JSONWriter {
    package var bytes: [UInt8] = []
    private var first = true

    package init() {}

    /// `{`, ready for the first key.
    package mutating func beginObject() {
        raw("{")
        first = true
    }

    package mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    package mutating func key(_ name: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        raw("\":")
    }

    package mutating func integer(_ value: some BinaryInteger) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// As JSONEncoder writes a Double: its description, without a trailing `.0`.
    package mutating func double(_ value: Double) throws {
        guard value.isFinite else { throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(value) is not valid JSON.")) }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    package mutating func optional(_ value: String?) {
        if let value { string(value) } else { raw("null") }
    }

    /// A JSON string: `"` and `\` escaped, control characters as JSONEncoder writes them,
    /// everything else (slashes, non-ASCII) as it is.
    package mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        defer { bytes.append(UInt8(ascii: "\"")) }
        // Most text needs no escape: copied in one go.
        guard value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            bytes.append(contentsOf: value.utf8)
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw(#"\""#)
            case UInt8(ascii: "\\"): raw(#"\\"#)
            case 0x0A: raw(#"\n"#)
            case 0x0D: raw(#"\r"#)
            case 0x09: raw(#"\t"#)
            case 0x08: raw(#"\b"#)
            case 0x0C: raw(#"\f"#)
            case 0x00..<0x20:
                raw(#"\u00"#)
                bytes.append(Self.hex[Int(byte >> 4)])
                bytes.append(Self.hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// `yyyy-MM-ddTHH:mm:ssZ` in UTC, whole seconds, as `.iso8601` writes it.
    package mutating func date(_ value: Date) {
        var seconds = time_t(value.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        bytes.append(UInt8(ascii: "\""))
        digits(Int(parts.tm_year) + 1900, 4); bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2); bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2); bytes.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), 2); bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2); bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2)
        raw("Z\"")
    }

    private mutating func digits(_ value: Int, _ width: Int) {
        let text = String(value)
        for _ in text.utf8.count..<max(width, text.utf8.count) { bytes.append(UInt8(ascii: "0")) }
        bytes.append(contentsOf: text.utf8)
    }

    package mutating func encoded(_ value: some Encodable) throws {
        bytes.append(contentsOf: try FerryJSON.encoder().encode(value))
    }
}
