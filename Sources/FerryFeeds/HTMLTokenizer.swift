import Foundation

/// A small HTML tokenizer for ``HTMLSanitizer``: text, start tags and end tags, the way a browser
/// would split them (tag names run to whitespace, `/` or `>`, so `<scr<script>` is one odd tag),
/// with comments, doctypes and processing instructions skipped. It never builds a tree; the
/// sanitizer's safety does not depend on it matching a browser, because the sanitizer writes
/// out only tags it made itself and escapes all text.
///
/// Bytes are written as hex literals, commented: `UInt8(ascii:)` is a function call per byte in
/// debug builds, where the tests parse a 50 MB feed.
struct HTMLTokenizer {
    enum Token: Equatable {
        /// Raw text as UTF-8, entities not yet decoded.
        case text(ArraySlice<UInt8>)
        /// The attributes are read only when asked for, with ``attribute(_:in:)``.
        case startTag(HTMLElement, attributes: Range<Int>)
        case endTag(HTMLElement)
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ html: String) {
        bytes = Array(html.utf8)
    }

    mutating func next() -> Token? {
        while index < bytes.count {
            guard bytes[index] == 0x3C else { return text() }  // `<`
            let following = index + 1 < bytes.count ? bytes[index + 1] : 0
            if Self.isLetter(following) {
                if let tag = startTag() { return tag }
                return nil  // A tag left open at the end: browsers drop it.
            } else if following == 0x2F {  // `/`
                if index + 2 < bytes.count, Self.isLetter(bytes[index + 2]) {
                    index += 2
                    let element = readName()
                    skip(past: 0x3E)  // `>`
                    return .endTag(element)
                }
                skip(past: 0x3E)  // `</>` or `</ x>`: a bogus comment.
            } else if following == 0x21 {  // `!`
                if starts(with: "<!--") {
                    index += 4
                    skip(pastSequence: Array("-->".utf8))
                } else {
                    skip(past: 0x3E)  // `>`
                }
            } else if following == 0x3F {  // `?`
                skip(past: 0x3E)  // `>`
            } else {
                return text()  // `a < b`, `<3`: just a character.
            }
        }
        return nil
    }

    /// Skips the content of a raw-text element such as `script`: everything up to its end tag,
    /// which is consumed too. Markup inside does not count, as in a browser.
    mutating func skipRawText(of element: HTMLElement) {
        let closer = Array("</\(element.rawValue)".utf8)
        while index < bytes.count {
            if bytes[index] == 0x3C, matchesCaseInsensitive(closer) {  // `<`
                let after = index + closer.count
                if after >= bytes.count || !Self.isNameByte(bytes[after]) {
                    index = after
                    skip(past: 0x3E)  // `>`
                    return
                }
            }
            index += 1
        }
    }

    // MARK: - Pieces

    private mutating func text() -> Token {
        let start = index
        index = bytes.withUnsafeBufferPointer { buffer in
            let from = start + 1
            guard from < buffer.count,
                let found = memchr(buffer.baseAddress! + from, Int32(0x3C), buffer.count - from)  // `<`
            else { return buffer.count }
            return UnsafeRawPointer(found) - UnsafeRawPointer(buffer.baseAddress!)
        }
        return .text(bytes[start..<index])
    }

    /// At `<` and a letter. Nil when the input ends before `>`.
    private mutating func startTag() -> Token? {
        index += 1
        let element = readName()
        let start = index
        var quote: UInt8?
        var expectsValue = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == 0x3E {  // `>`
                return .startTag(element, attributes: start..<index - 1)
            } else if byte == 0x3D {  // `=`
                expectsValue = true
            } else if expectsValue && (byte == 0x22 || byte == 0x27) {  // A quoted value: `>` inside is text.
                quote = byte
                expectsValue = false
            } else if !Self.isSpace(byte) {
                expectsValue = false
            }
        }
        return nil
    }

    /// The raw value (entities not decoded) of an attribute in a start tag's `range`, the first
    /// if it is repeated, as in a browser. `name` is lowercase.
    func attribute(_ name: String, in range: Range<Int>) -> String? {
        let wanted = Array(name.utf8)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            if Self.isSpace(byte) || byte == 0x2F {  // `/`
                index += 1
                continue
            }
            let nameStart = index
            index += 1  // A name may start with `=`; it never ends on its first byte.
            while index < range.upperBound, Self.isNameByte(bytes[index]), bytes[index] != 0x3D { index += 1 }  // `=`
            let matches = Self.equalsLowercased(bytes[nameStart..<index], wanted)
            while index < range.upperBound, Self.isSpace(bytes[index]) { index += 1 }
            var value = ""
            if index < range.upperBound, bytes[index] == 0x3D {  // `=`
                index += 1
                while index < range.upperBound, Self.isSpace(bytes[index]) { index += 1 }
                let valueRange: Range<Int>
                if index < range.upperBound, bytes[index] == 0x22 || bytes[index] == 0x27 {  // `"` `'`
                    let quote = bytes[index]
                    let valueStart = index + 1
                    index = valueStart
                    while index < range.upperBound, bytes[index] != quote { index += 1 }
                    valueRange = valueStart..<index
                    index += 1
                } else {
                    let valueStart = index
                    while index < range.upperBound, !Self.isSpace(bytes[index]) { index += 1 }
                    valueRange = valueStart..<index
                }
                if matches { value = String(decoding: bytes[valueRange], as: UTF8.self) }
            }
            if matches { return value }
        }
        return nil
    }

    private static func equalsLowercased(_ bytes: ArraySlice<UInt8>, _ lowercase: [UInt8]) -> Bool {
        guard bytes.count == lowercase.count else { return false }
        var offset = 0
        for byte in bytes {
            if lower(byte) != lowercase[offset] { return false }
            offset += 1
        }
        return true
    }

    private mutating func readName() -> HTMLElement {
        let start = index
        var hasUppercase = false
        while index < bytes.count, Self.isNameByte(bytes[index]) {
            hasUppercase = hasUppercase || (bytes[index] >= 0x41 && bytes[index] <= 0x5A)  // `A` `Z`
            index += 1
        }
        guard index - start <= 10 else { return .other }  // No name we know is longer.
        let name = String(decoding: bytes[start..<index], as: UTF8.self)
        return HTMLElement(name: hasUppercase ? name.lowercased() : name)
    }

    private mutating func skip(past byte: UInt8) {
        while index < bytes.count, bytes[index] != byte { index += 1 }
        index = min(index + 1, bytes.count)
    }

    private mutating func skip(pastSequence sequence: [UInt8]) {
        while index < bytes.count {
            if bytes[index...].starts(with: sequence) {
                index += sequence.count
                return
            }
            index += 1
        }
    }

    private func starts(with literal: String) -> Bool {
        bytes[index...].starts(with: literal.utf8)
    }

    private func matchesCaseInsensitive(_ sequence: [UInt8]) -> Bool {
        guard index + sequence.count <= bytes.count else { return false }
        for offset in 0..<sequence.count where Self.lower(bytes[index + offset]) != Self.lower(sequence[offset]) {
            return false
        }
        return true
    }

    static func isLetter(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte | 0x20)  // `a` `z`
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
    }

    /// Tag names run until whitespace, `/` or `>`, as in a browser.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        !isSpace(byte) && byte != 0x2F && byte != 0x3E  // `/` `>`
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte  // `A` `Z`
    }
}
