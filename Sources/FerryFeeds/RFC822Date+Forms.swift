import Foundation

/// RFC 3339 / ISO 8601 extended form: `2024-05-01`, `2024-05-01T10:00Z`,
/// `2024-05-01 10:00:00.123+02:00`, `2024-05-01T10:00:00 GMT`. Nil if the text is not that
/// shape; `date` is nil if it is, with a part out of range.
struct ISO8601Parts {
    let date: Date?

    init?(_ text: ArraySlice<UInt8>) {
        var index = text.startIndex
        func number(_ count: Int) -> Int? {
            guard index + count <= text.endIndex else { return nil }
            for offset in 0..<count where !RFC822Date.isDigit(text[index + offset]) { return nil }
            defer { index += count }
            return RFC822Date.number(text[index..<index + count])
        }
        func skip(_ byte: Unicode.Scalar) -> Bool {
            guard index < text.endIndex, text[index] == UInt8(ascii: byte) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2) else {
            return nil
        }
        var clock: RFC822Date.Clock = (0, 0, 0, 0)
        var offset = 0
        if index < text.endIndex {
            guard skip("T") || skip("t") || skip(" ") else { return nil }
            let clockStart = index
            while index < text.endIndex, RFC822Date.isClockByte(text[index]) { index += 1 }
            guard let parsed = RFC822Date.clock(text[clockStart..<index]) else { return nil }
            clock = parsed
            while index < text.endIndex, RFC822Date.isSpace(text[index]) { index += 1 }
            let zone = text[index...]
            if !zone.isEmpty {
                if let numeric = RFC822Date.numericOffset(zone) {
                    offset = numeric
                } else if let named = RFC822Date.zones[String(decoding: zone, as: UTF8.self).lowercased()] {
                    offset = named
                } else {
                    return nil
                }
            }
        }
        date = RFC822Date.date(year: year, month: month, day: day, clock: clock, offset: offset)
    }
}

/// The RFC 822 family, read as a bag of tokens: `Wed, 1 May 2024 10:00:00 +0000`,
/// `Wednesday, 01-May-24 10:00:00 GMT`, `May 1, 2024 10:00 PM EST`, `Wed May  1 10:00:00 2024`,
/// `Wed May 01 2024 10:00:00 GMT+0000 (Coordinated Universal Time)`.
struct RFC822Parts {
    let date: Date?

    init?(_ text: ArraySlice<UInt8>) {
        var month: Int?
        var numbers: [ArraySlice<UInt8>] = []
        var clock: RFC822Date.Clock?
        var offset = 0
        var meridiem: String?
        for token in Self.tokens(text) {
            if token.hasColon && RFC822Date.isDigit(token.bytes[token.bytes.startIndex]) {
                // The clock, maybe with its zone attached: `10:00:00Z`, `10:00:00+02:00`.
                var end = token.bytes.startIndex
                while end < token.bytes.endIndex, RFC822Date.isClockByte(token.bytes[end]) { end += 1 }
                guard clock == nil, let parsed = RFC822Date.clock(token.bytes[..<end]) else { return nil }
                clock = parsed
                if end < token.bytes.endIndex {
                    guard let zone = Self.zone(token.bytes[end...]) else { return nil }
                    offset = zone
                }
                continue
            }
            if token.isNumber {
                numbers.append(token.bytes)
                continue
            }
            if let zone = Self.zone(token.bytes) {
                offset = zone
                continue
            }
            var name = String(decoding: token.bytes, as: UTF8.self).lowercased()
            if name.hasSuffix(".") { name.removeLast() }
            let monthIndex = name.count >= 3 ? RFC822Date.monthNames.firstIndex(where: { $0.hasPrefix(name) }) : nil
            if month == nil, let monthIndex {
                month = monthIndex + 1
            } else if name.count >= 3, RFC822Date.weekdayNames.contains(where: { $0.hasPrefix(name) }) {
                continue
            } else if name == "am" || name == "pm" {
                meridiem = name
            } else if clock == nil || name.count > 5 || !token.isWord {
                return nil
            }  // Else a zone name we do not know: UTC, rather than no date at all.
        }
        guard let month, let calendarDay = Self.dayAndYear(numbers) else { return nil }
        var time = clock ?? (0, 0, 0, 0)
        if let meridiem {
            guard (1...12).contains(time.hour) else { return nil }
            time.hour = time.hour % 12 + (meridiem == "pm" ? 12 : 0)
        }
        date = RFC822Date.date(year: calendarDay.year, month: month, day: calendarDay.day, clock: time, offset: offset)
    }

    struct Token {
        var bytes: ArraySlice<UInt8>
        var hasColon = false
        var isNumber = true
        var isWord = true
    }

    /// The words between spaces, tabs and commas, up to a `(comment)`. `01-May-24` (RFC 850) is
    /// three words; `-0500` (a zone) and `10:00-05:00` (a clock) are one.
    private static func tokens(_ text: ArraySlice<UInt8>) -> [Token] {
        var tokens: [Token] = []
        var index = text.startIndex
        var start = index
        var hasLetter = false
        var hasDash = false
        func finish() {
            guard start < index else { return }
            let bytes = text[start..<index]
            if hasDash, hasLetter, bytes.first != 0x2D, !bytes.contains(0x3A) {  // `-` `:`
                for part in bytes.split(separator: 0x2D) { tokens.append(token(part)) }  // `-`
            } else {
                tokens.append(token(bytes))
            }
        }
        while index < text.endIndex, text[index] != 0x28 {  // `(`
            let byte = text[index]
            if byte == 0x20 || byte == 0x2C || byte == 0x09 {  // `,`
                finish()
                start = index + 1
                hasLetter = false
                hasDash = false
            } else {
                hasLetter = hasLetter || RFC822Date.isLetter(byte)
                hasDash = hasDash || byte == 0x2D  // `-`
            }
            index += 1
        }
        finish()
        return tokens
    }

    private static func token(_ bytes: ArraySlice<UInt8>) -> Token {
        var token = Token(bytes: bytes)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            token.hasColon = token.hasColon || byte == 0x3A  // `:`
            token.isNumber = token.isNumber && RFC822Date.isDigit(byte)
            token.isWord = token.isWord && RFC822Date.isLetter(byte)
            index += 1
        }
        return token
    }

    /// A zone token: a name, a military letter, a numeric offset, or `GMT+0200`.
    private static func zone(_ token: ArraySlice<UInt8>) -> Int? {
        if let numeric = RFC822Date.numericOffset(token) { return numeric }
        guard let first = token.first, RFC822Date.isLetter(first), token.count <= 9 else { return nil }
        let word = String(decoding: token, as: UTF8.self).lowercased()
        if let named = RFC822Date.zones[word] { return named }
        if token.count == 1, word != "j" { return 0 }
        for prefix in ["gmt", "utc", "ut"] where word.hasPrefix(prefix) {
            if let numeric = RFC822Date.numericOffset(token.dropFirst(prefix.count)) { return numeric }
        }
        return nil
    }

    /// The day and the year among the numbers: a number of four digits is the year; otherwise the
    /// first number is the day and the second a two-digit year.
    private static func dayAndYear(_ numbers: [ArraySlice<UInt8>]) -> (day: Int, year: Int)? {
        guard numbers.count == 2 else { return nil }
        let first = RFC822Date.number(numbers[0])
        let second = RFC822Date.number(numbers[1])
        switch (numbers[0].count, numbers[1].count) {
        case (1...2, 4): return (first, second)
        case (4, 1...2): return (second, first)
        case (1...2, 1...2): return (first, second < 70 ? 2000 + second : 1900 + second)
        default: return nil
        }
    }
}
