private let hexDigits = Array("0123456789abcdef".unicodeScalars)

extension Sequence<UInt8> {
    /// The bytes as lowercase hexadecimal, two digits each: how digests, tokens and ETags are written.
    package var hexText: String {
        var text = String.UnicodeScalarView()
        for byte in self {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(text)
    }
}
