#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A linear pass over a feed's bytes before `XMLParser` sees them: it refuses what is dangerous
/// and repairs what real feeds get wrong, so that a stray byte does not cost a listener a whole
/// podcast. The standard library checks the UTF-8, then one scan does the rest; a document with
/// nothing to repair comes back as it was.
///
/// Refused (DESIGN: "DOCTYPE refused"): a DOCTYPE with an internal subset, and any `<!ENTITY`
/// outside CDATA and comments (where it is only text). Entities are how billion-laughs bombs and
/// external-entity reads work, and libxml2 silently drops the text of entities it does not
/// expand, so half-parsing is no answer. A DOCTYPE that only names an external DTD (Netscape
/// RSS 0.91) is removed and never fetched.
///
/// Repaired: bytes that are not UTF-8 become U+FFFD; control characters XML forbids (and U+FFFE,
/// U+FFFF) are dropped; a `&` that does not start a reference becomes `&amp;`; HTML named
/// entities become numeric references; numeric references to forbidden characters are dropped.
/// Every document is first made UTF-8 without a BOM or a declared encoding (``utf8(_:)``), so
/// that libxml2 decodes nothing itself and these checks see what it will see: ISO-8859-1 and
/// US-ASCII are read as Windows-1252 (as browsers do), UTF-16 by its BOM, any other declared
/// encoding through iconv.
/// CDATA sections, comments and processing instructions are copied as they are, apart from the
/// byte repairs; an instruction without data (`<?target?>`) is dropped, as it crashes XMLParser.
///
/// Bytes are written as hex literals, commented: `UInt8(ascii:)` is a function call per byte in
/// debug builds, where the tests parse a 50 MB feed.
enum XMLRepair {
    /// Why a document was refused, in words for the end of a sentence.
    struct Refusal: Error, Equatable {
        let reason: String
    }

    static func prepare(_ data: Data) throws(Refusal) -> Data {
        withoutDeclaration(withoutEmptyInstructions(try repair(data)))
    }

    /// The document without what libxml2 reads before all else, a BOM and an XML declaration,
    /// either of which may name an encoding for it to switch to: the document is UTF-8, and the
    /// checks before saw it as UTF-8. The last step, as the repair can bring a declaration to the
    /// start (by dropping NUL bytes before it, found by fuzzing), and one may be too long for
    /// ``utf8(_:)`` to read. Removed through its first `>`, where libxml2 stops reading a broken
    /// one too, and again while another follows. A slice: nothing is copied.
    static func withoutDeclaration(_ data: Data) -> Data {
        var start = data.startIndex
        while true {
            let rest = data[start...]
            if rest.starts(with: [0xEF, 0xBB, 0xBF]) {
                start += 3
            } else if startsWithDeclaration(rest) {
                start = rest.firstIndex(of: 0x3E).map { $0 + 1 } ?? data.endIndex  // `>`
            } else {
                return start == data.startIndex ? data : data[start...]
            }
        }
    }

    /// Every `<?target?>` (no data) anywhere, not only where the scan meets markup: XMLParser
    /// (swift-corelibs-foundation, Swift 6.3) reads its data with strlen(NULL) and crashes the
    /// process, and libxml2's recovery from broken markup finds one inside what looked like an
    /// instruction or a tag, or where the scan dropped a byte between `<` and `?` (found by
    /// fuzzing, five inputs). Each look stops at the first `?` or space, so the pass stays
    /// linear; a document without one comes back as it was.
    static func withoutEmptyInstructions(_ data: Data) -> Data {
        let output: [UInt8]? = data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> [UInt8]? in
            var output: [UInt8]?
            var copied = 0
            var index = 0
            while index + 1 < bytes.count {
                guard bytes[index] == 0x3C, bytes[index + 1] == 0x3F else {  // `<?`
                    index += 1
                    continue
                }
                var cursor = index + 2
                while cursor < bytes.count, ![0x3F, 0x20, 0x09, 0x0A, 0x0D].contains(bytes[cursor]) {
                    cursor += 1
                }
                if cursor + 1 < bytes.count, bytes[cursor] == 0x3F, bytes[cursor + 1] == 0x3E {
                    if output == nil { output = [] }
                    output!.append(contentsOf: bytes[copied..<index])
                    copied = cursor + 2
                    index = cursor + 2
                } else {
                    // The look stopped at the first `?`: the only `<?` it passed over may start
                    // just before it (`<?a<?b?>`, found by fuzzing).
                    index = max(index + 2, cursor - 1)
                }
            }
            if output != nil { output!.append(contentsOf: bytes[copied...]) }
            return output
        }
        return output.map { Data($0) } ?? data
    }

    private static func repair(_ data: Data) throws(Refusal) -> Data {
        let (source, transcoded) = utf8(data)
        let valid = String(validating: source, as: UTF8.self)
        let text = valid ?? String(decoding: source, as: UTF8.self)  // Ill-formed bytes become U+FFFD.
        let count = text.utf8.count
        var scanner = Scanner(count: count)
        text.withCString { pointer in
            pointer.withMemoryRebound(to: UInt8.self, capacity: count + 1) { scanner.run($0) }
        }
        if let refusal = scanner.refusal { throw refusal }
        if let output = scanner.output { return Data(output) }
        return transcoded || valid == nil ? Data(text.utf8) : data
    }

    /// The document decoded as its BOM or declaration says, in UTF-8, and whether that changed
    /// it. libxml2 must decode nothing itself, as every check here must see the characters it
    /// will see: left to decode a declared encoding, libxml2 read UTF-7's `+ADw-?a?+AD4-` as an
    /// instruction without data that no byte check could find, and XMLParser crashed the
    /// process; a DOCTYPE or an ENTITY could hide the same way. What would tell libxml2 to
    /// decode, a BOM or a declaration, goes last (``withoutDeclaration(_:)``).
    static func utf8(_ data: Data) -> (bytes: Data, transcoded: Bool) {
        if let bigEndian = utf16ByteOrder(data) {
            return (Data(transcodeUTF16([UInt8](data), bigEndian: bigEndian)), true)
        }
        // After a BOM, the document is UTF-8 whatever it declares.
        let hasBOM = data.starts(with: [0xEF, 0xBB, 0xBF])
        let source = hasBOM ? data.dropFirst(3) : data
        let head = [UInt8](source.prefix(512))
        guard !hasBOM, let end = declarationEnd(head), let encoding = declaredEncoding(head[0..<end]),
            encoding != "utf-8", encoding != "utf8"
        else { return (source, hasBOM) }
        let body = [UInt8](source.dropFirst(end))
        if singleByteEncodings.contains(encoding) { return (Data(transcodeWindows1252(body)), true) }
        // A declaration that does not read as itself in its encoding (UTF-16 without a BOM,
        // UTF-32, EBCDIC) is a label on bytes that are not in it: they are read as UTF-8, as
        // they are if the name is no encoding's (`utf-` + control characters + `8`, found by
        // fuzzing) or iconv does not know it.
        guard isEncodingName(encoding), let declaration = transcode(head[0..<end], from: encoding),
            declaration.elementsEqual(head[0..<end]), let converted = transcode(body, from: encoding)
        else { return (Data(body), true) }
        return (Data(converted), true)
    }

}

extension XMLRepair {
    /// The single pass, over a NUL-terminated buffer. Runs of ordinary bytes are found with
    /// `strcspn` and copied only once something before them changed, so a clean feed costs one
    /// C-speed scan and no copy. Each stop looks ahead a bounded number of bytes, so the whole is
    /// linear.
    struct Scanner {
        /// Bytes in the buffer, which is valid UTF-8 (so U+FFFE and U+FFFF are `EF BF BE/BF`).
        let count: Int
        /// Nil until the first repair.
        private(set) var output: [UInt8]?
        private(set) var refusal: Refusal?
        private var input: UnsafePointer<UInt8>!
        private var index = 0
        /// Input before this index is in `output`.
        private var copied = 0

        init(count: Int) {
            self.count = count
        }

        /// Stops of each mode: the forbidden controls, `EF` (for U+FFFE/U+FFFF), and the bytes
        /// that may start something to look at.
        private static let controls: [UInt8] = Array(1...8) + [11, 12] + Array(14...31) + [0xEF]
        private static let textStops = cString(controls + Array("<&".utf8))
        private static let cdataStops = cString(controls + Array("]".utf8))
        private static let commentStops = cString(controls + Array("-".utf8))
        private static let instructionStops = cString(controls + Array("?".utf8))

        private static func cString(_ bytes: [UInt8]) -> [CChar] {
            bytes.map { CChar(bitPattern: $0) } + [0]
        }

        mutating func run(_ input: UnsafePointer<UInt8>) {
            self.input = input
            while index < count, refusal == nil {
                skip(over: Self.textStops)
                guard index < count else { break }
                switch input[index] {
                case 0x3C: markup()  // `<`
                case 0x26: reference()  // `&`
                default: special()
                }
            }
            if output != nil { replace(upTo: count, with: []) }
            self.input = nil
        }

        /// Moves `index` to the next stop (or the terminating NUL).
        private mutating func skip(over stops: [CChar]) {
            index += UnsafeRawPointer(input + index).withMemoryRebound(to: CChar.self, capacity: 1) {
                strcspn($0, stops)
            }
        }

        /// Replaces `index..<end` with `replacement` and moves past it.
        private mutating func replace(upTo end: Int, with replacement: [UInt8]) {
            if output == nil {
                output = []
                output!.reserveCapacity(count + count / 16 + 16)
            }
            output!.append(contentsOf: UnsafeBufferPointer(start: input + copied, count: index - copied))
            output!.append(contentsOf: replacement)
            index = end
            copied = end
        }

        /// A control character (or NUL) is dropped, as are U+FFFE and U+FFFF.
        private mutating func special() {
            let byte = input[index]
            if byte == 0xEF {
                let noncharacter = index + 2 < count && input[index + 1] == 0xBF && input[index + 2] >= 0xBE
                if noncharacter { replace(upTo: index + 3, with: []) } else { index += 1 }
            } else if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
                replace(upTo: index + 1, with: [])
            } else {
                index += 1
            }
        }

        private mutating func markup() {
            if matches("<![CDATA[") {
                index += 9
                copy(through: "]]>", stops: Self.cdataStops)
            } else if matches("<!--") {
                index += 4
                copy(through: "-->", stops: Self.commentStops)
            } else if matches("<?") {
                // A `<?target?>` without data is dropped afterwards, wherever it stands
                // (`withoutEmptyInstructions`).
                if index + 2 < count, input[index + 2] != 0x3F, !Self.startsName(input[index + 2]) {
                    // `<?` without a target is no instruction: libxml2 skips it and may then read
                    // an instruction inside it that copying through `?>` would hide from the
                    // check above (`<?<a<?b?>`, found by fuzzing). It becomes text.
                    replace(upTo: index + 1, with: Array("&lt;".utf8))
                } else {
                    index += 2
                    copy(through: "?>", stops: Self.instructionStops)
                }
            } else if matches("<!doctype", caseInsensitive: true) {
                removeDoctype()
            } else if matches("<!entity", caseInsensitive: true) {
                refusal = Refusal(reason: "it contains an <!ENTITY> declaration")
            } else {
                index += 1
            }
        }

        /// Removes a DOCTYPE that only names an external DTD; refuses one with an internal subset.
        private mutating func removeDoctype() {
            var cursor = index
            var quote: UInt8?
            while cursor < count {
                let byte = input[cursor]
                cursor += 1
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == 0x22 || byte == 0x27 {  // `"` `'`
                    quote = byte
                } else if byte == 0x5B {  // `[`
                    refusal = Refusal(reason: "its DOCTYPE has an internal subset, where entities are declared")
                    return
                } else if byte == 0x3E {  // `>`
                    break
                }
            }
            replace(upTo: cursor, with: [])
        }

        /// Whether `byte` can start an XML name (a letter, `_`, `:`, or part of a non-ASCII one).
        static func startsName(_ byte: UInt8) -> Bool {
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == 0x3A || byte >= 0x80
        }

        private func matches(_ literal: StaticString, caseInsensitive: Bool = false) -> Bool {
            let length = literal.utf8CodeUnitCount
            guard index + length <= count else { return false }
            let bytes = literal.utf8Start
            for offset in 0..<length {
                var byte = input[index + offset]
                if caseInsensitive, byte >= 0x41, byte <= 0x5A { byte += 32 }  // `A` `Z`
                if byte != bytes[offset] { return false }
            }
            return true
        }

        /// Inside CDATA, a comment or an instruction: only byte repairs, up to the terminator.
        private mutating func copy(through terminator: StaticString, stops: [CChar]) {
            while index < count, refusal == nil {
                skip(over: stops)
                guard index < count else { return }
                if input[index] == terminator.utf8Start[0] {
                    if matches(terminator) {
                        index += terminator.utf8CodeUnitCount
                        return
                    }
                    index += 1
                } else {
                    special()
                }
            }
        }

        // MARK: References

        /// At a `&`: keeps a well-formed XML reference, rewrites an HTML one, escapes the rest.
        private mutating func reference() {
            var cursor = index + 1
            if cursor < count, input[cursor] == 0x23 {  // `#`
                cursor += 1
                let hex = cursor < count && (input[cursor] | 0x20) == 0x78  // `x`
                if hex { cursor += 1 }
                var value: UInt32 = 0
                var digits = 0
                while cursor < count, digits < 8, let digit = Self.digit(input[cursor], hex: hex) {
                    value = value * (hex ? 16 : 10) + digit
                    digits += 1
                    cursor += 1
                }
                guard digits > 0, cursor < count, input[cursor] == 0x3B else {  // `;`
                    return replace(upTo: index + 1, with: Array("&amp;".utf8))
                }
                if (0x80...0x9F).contains(value) {
                    replace(upTo: cursor + 1, with: Self.reference(XMLRepair.windows1252[Int(value - 0x80)]))
                } else if Self.isXMLCharacter(value) {
                    index = cursor + 1
                } else {
                    replace(upTo: cursor + 1, with: [])
                }
                return
            }
            let start = cursor
            while cursor < count, cursor - start < 32, Self.isNameByte(input[cursor], first: cursor == start) {
                cursor += 1
            }
            guard cursor > start, cursor < count, input[cursor] == 0x3B else {  // `;`
                return replace(upTo: index + 1, with: Array("&amp;".utf8))
            }
            let name = String(decoding: UnsafeBufferPointer(start: input + start, count: cursor - start), as: UTF8.self)
            if HTMLEntities.xmlPredefined.contains(name) {
                index = cursor + 1
            } else if let value = HTMLEntities.codePoint(named: name) {
                replace(upTo: cursor + 1, with: Self.reference(value))
            } else {
                replace(upTo: index + 1, with: Array("&amp;".utf8))
            }
        }

        private static func reference(_ value: UInt32) -> [UInt8] {
            Array("&#\(value);".utf8)
        }

        private static func digit(_ byte: UInt8, hex: Bool) -> UInt32? {
            switch byte {
            case 0x30...0x39: return UInt32(byte - 0x30)  // `0` `9`
            case 0x61...0x66 where hex: return UInt32(byte - 0x61 + 10)  // `a` `f`
            case 0x41...0x46 where hex: return UInt32(byte - 0x41 + 10)  // `A` `F`
            default: return nil
            }
        }

        private static func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
            switch byte {
            case 0x61...0x7A, 0x41...0x5A, 0x5F:  // `a` `z` `A` `Z` `_`
                return true
            case 0x30...0x39, 0x2E, 0x2D:  // `0` `9` `.` `-`
                return !first
            default:
                return false
            }
        }

        /// XML 1.0 `Char`.
        static func isXMLCharacter(_ value: UInt32) -> Bool {
            switch value {
            case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return true
            default: return false
            }
        }
    }
}
