import Foundation

/// Bytes are written as hex literals, commented: `UInt8(ascii:)` is a function call per byte in
/// debug builds, where the tests parse a 50 MB feed.
extension HTMLSanitizer {
    /// Decodes `&name;` (HTML 4 and XML names), `&#N;` and `&#xH;`. A reference without its `;`
    /// stays as written: feeds are full of URLs like `?a=1&copy=2`, and HTML's legacy
    /// semicolon-less forms would mangle them. Numbers that are not characters become U+FFFD;
    /// 128–159 are read as Windows-1252, as browsers do.
    static func decodeEntities(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let hasAmpersand = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { memchr($0, Int32(0x26), buffer.count) != nil } ?? false  // `&`
        }
        guard hasAmpersand else { return bytes }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        var copied = index
        while index < bytes.endIndex {
            guard bytes[index] == 0x26, let (scalar, end) = reference(in: bytes, at: index) else {  // `&`
                index += 1
                continue
            }
            output += bytes[copied..<index]
            output += String(Character(scalar)).utf8
            index = end
            copied = end
        }
        output += bytes[copied...]
        return output[...]
    }

    /// The character a reference at `start` stands for, and the index after its `;`.
    static func reference(in bytes: ArraySlice<UInt8>, at start: Int) -> (Unicode.Scalar, Int)? {
        var cursor = start + 1
        guard cursor < bytes.endIndex else { return nil }
        if bytes[cursor] == 0x23 {  // `#`
            cursor += 1
            let hex = cursor < bytes.endIndex && (bytes[cursor] | 0x20) == 0x78  // `x`
            if hex { cursor += 1 }
            var value: UInt32 = 0
            var digits = 0
            while cursor < bytes.endIndex, digits < 8, let digit = hexValue(bytes[cursor]), hex || digit < 10 {
                value = value * (hex ? 16 : 10) + digit
                digits += 1
                cursor += 1
            }
            guard digits > 0, cursor < bytes.endIndex, bytes[cursor] == 0x3B else { return nil }  // `;`
            if (0x80...0x9F).contains(value) { value = XMLRepair.windows1252[Int(value - 0x80)] }
            let scalar = value == 0 ? nil : Unicode.Scalar(value)
            return (scalar ?? "\u{FFFD}", cursor + 1)
        }
        let nameStart = cursor
        while cursor < bytes.endIndex, cursor - nameStart < 32, HTMLTokenizer.isLetter(bytes[cursor])
            || (cursor > nameStart && (0x30...0x39).contains(bytes[cursor]))  // `0` `9`
        {
            cursor += 1
        }
        guard cursor > nameStart, cursor < bytes.endIndex, bytes[cursor] == 0x3B,  // `;`
            let value = HTMLEntities.codePoint(named: String(decoding: bytes[nameStart..<cursor], as: UTF8.self)),
            let scalar = Unicode.Scalar(value)
        else { return nil }
        return (scalar, cursor + 1)
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: return UInt32(byte - 0x30)  // `0` `9`
        case 0x61...0x66: return UInt32(byte - 0x61 + 10)  // `a` `f`
        case 0x41...0x46: return UInt32(byte - 0x41 + 10)  // `A` `F`
        default: return nil
        }
    }

    /// Escapes `&`, `<` and `>` (and in attributes, both quotes), copying runs in between.
    static func escape(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout ByteWriter, attribute: Bool = false) {
        var index = 0
        var copied = 0
        while index < bytes.count {
            let replacement: StaticString
            switch bytes[index] {
            case 0x26: replacement = "&amp;"  // `&`
            case 0x3C: replacement = "&lt;"  // `<`
            case 0x3E: replacement = "&gt;"  // `>`
            case 0x22 where attribute: replacement = "&quot;"  // `"`
            case 0x27 where attribute: replacement = "&#39;"  // `'`
            default:
                index += 1
                continue
            }
            output.append(UnsafeBufferPointer(rebasing: bytes[copied..<index]))
            output.append(replacement)
            index += 1
            copied = index
        }
        output.append(UnsafeBufferPointer(rebasing: bytes[copied...]))
    }

    /// `text` escaped for HTML text or a double-quoted attribute.
    package static func escape(_ text: String, attribute: Bool = false) -> String {
        var text = text
        var output = ByteWriter(capacity: text.utf8.count + 16)
        text.withUTF8 { escape($0, into: &output, attribute: attribute) }
        return output.string
    }
}
