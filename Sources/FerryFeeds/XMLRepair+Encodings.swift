import Foundation

/// A feed's bytes as UTF-8: the encodings feeds declare (or their byte order marks show), and the
/// declaration that names them.
extension XMLRepair {

    static let singleByteEncodings: Set<String> = [
        "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "windows-1252", "cp1252",
        "us-ascii", "ascii",
    ]

    /// XML's EncName: `[A-Za-z] ([A-Za-z0-9._] | '-')*`.
    static func isEncodingName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || ".-_".unicodeScalars.contains($0)) }
    }

    /// `bytes` in `encoding`, converted to UTF-8 by the system's iconv; a sequence it cannot read
    /// becomes U+FFFD. Nil when iconv does not know the encoding.
    static func transcode(_ bytes: some Collection<UInt8>, from encoding: String) -> [UInt8]? {
        guard let converter = iconv_open("UTF-8", encoding), Int(bitPattern: converter) != -1 else { return nil }
        defer { iconv_close(converter) }
        let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
        var input = bytes.map { CChar(bitPattern: $0) }
        var chunk = [CChar](repeating: 0, count: 64 << 10)
        var output: [UInt8] = []
        output.reserveCapacity(input.count + input.count / 2 + 16)
        input.withUnsafeMutableBufferPointer { input in
            chunk.withUnsafeMutableBufferPointer { chunk in
                var next = input.baseAddress
                var left = input.count
                var allRead = false
                while true {
                    var out = chunk.baseAddress
                    var room = chunk.count
                    // Once every byte is read, a call without input ends a stateful encoding's
                    // last sequence.
                    let result = allRead ? iconv(converter, nil, nil, &out, &room) : iconv(converter, &next, &left, &out, &room)
                    let failure = result == -1 ? errno : 0
                    output.append(contentsOf: chunk[..<(chunk.count - room)].lazy.map { UInt8(bitPattern: $0) })
                    switch failure {
                    case 0:
                        if allRead { return }
                        allRead = true
                    case E2BIG:
                        continue
                    case EILSEQ:  // A byte that starts nothing: U+FFFD, and on.
                        output += replacement
                        next = next.map { $0 + 1 }
                        left -= 1
                    default:  // EINVAL: a sequence cut off by the end.
                        output += replacement
                        return
                    }
                }
            }
        }
        return output
    }

    /// The byte order of a UTF-16 document, told by its BOM or by the zero byte of `<`.
    static func utf16ByteOrder(_ bytes: Data) -> Bool? {
        guard bytes.count >= 2 else { return nil }
        switch (bytes[bytes.startIndex], bytes[bytes.startIndex + 1]) {
        case (0xFE, 0xFF), (0x00, 0x3C): return true  // `<`
        case (0xFF, 0xFE), (0x3C, 0x00): return false  // `<`
        default: return nil
        }
    }

    static func transcodeUTF16(_ bytes: [UInt8], bigEndian: Bool) -> [UInt8] {
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = 0
        while index + 1 < bytes.count {
            let (high, low) = bigEndian ? (bytes[index], bytes[index + 1]) : (bytes[index + 1], bytes[index])
            units.append(UInt16(high) << 8 | UInt16(low))
            index += 2
        }
        if units.first == 0xFEFF { units.removeFirst() }
        return Array(String(decoding: units, as: UTF16.self).utf8)
    }

    /// Windows-1252 is what "ISO-8859-1" means on the web: 0x80–0x9F are curly quotes and dashes.
    static func transcodeWindows1252(_ bytes: [UInt8]) -> [UInt8] {
        var scalars = String.UnicodeScalarView()
        scalars.reserveCapacity(bytes.count)
        for byte in bytes {
            let value = byte >= 0x80 && byte < 0xA0 ? windows1252[Int(byte - 0x80)] : UInt32(byte)
            scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
        }
        return Array(String(scalars).utf8)
    }

    /// Code points of Windows-1252 bytes 0x80–0x9F; U+FFFD where the code page has none.
    static let windows1252: [UInt32] = [
        0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
        0x0152, 0xFFFD, 0x017D, 0xFFFD, 0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
    ]

    /// The lowercased `encoding` of an XML declaration.
    static func declaredEncoding(_ declaration: ArraySlice<UInt8>) -> String? {
        let declaration = String(decoding: declaration, as: UTF8.self).lowercased()
        guard let key = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[key.upperBound...].drop(while: { $0 == " " || $0 == "=" || $0 == "\t" })
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix(while: { $0 != quote }))
    }

    /// Whether the bytes start with an XML declaration as libxml2 sees one: `<?xml` and a blank
    /// (so not `<?xml-stylesheet …?>`).
    static func startsWithDeclaration(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.starts(with: "<?xml".utf8) && bytes.dropFirst(5).first.map { [0x20, 0x09, 0x0A, 0x0D].contains($0) } == true
    }

    /// The index just past `?>` of a leading XML declaration.
    static func declarationEnd(_ bytes: [UInt8]) -> Int? {
        guard startsWithDeclaration(bytes) else { return nil }
        var index = 5
        while index + 1 < min(bytes.count, 512) {
            if bytes[index] == 0x3F && bytes[index + 1] == 0x3E { return index + 2 }  // `?` `>`
            index += 1
        }
        return nil
    }
}
