import Foundation

extension HTMLSanitizer {
    /// Sanitised HTML and plain text of the same source.
    struct Rendering: Hashable {
        var html: String
        var text: String
    }

    /// One pass over `source` that writes the sanitised HTML, the plain text, or both: the feed
    /// parser wants both of every description, and tokenizing is most of the work.
    static func render(_ source: String, baseURL: URL?, html wantsHTML: Bool, text wantsText: Bool) -> Rendering {
        var tokenizer = HTMLTokenizer(source)
        var html = ByteWriter(capacity: wantsHTML ? source.utf8.count + source.utf8.count / 8 : 0)
        var text = PlainTextBuilder(capacity: wantsText ? source.utf8.count : 0)
        var open: [HTMLElement] = []
        var dropping: [HTMLElement] = []
        while let token = tokenizer.next() {
            switch token {
            case .text(let raw):
                guard dropping.isEmpty else { continue }
                decodeEntities(raw).withUnsafeBufferPointer { bytes in
                    if wantsHTML { escape(bytes, into: &html) }
                    if wantsText { text.append(bytes) }
                }
            case .startTag(let element, let attributes):
                if element.isRawText {
                    tokenizer.skipRawText(of: element)
                } else if element.isDropped {
                    if !element.isVoid { dropping.append(element) }
                } else if dropping.isEmpty {
                    if wantsText { text.boundary(element.textBreak) }
                    guard wantsHTML, element.isAllowed else { continue }
                    let href = element == .a ? tokenizer.attribute("href", in: attributes) : nil
                    openTag(element, href: href, baseURL: baseURL, open: &open, into: &html)
                }
            case .endTag(let element):
                if let index = dropping.lastIndex(of: element) {
                    dropping.removeSubrange(index...)
                } else if dropping.isEmpty {
                    if wantsText, element != .br { text.boundary(element.textBreak) }
                    if wantsHTML, element != .other, let index = open.lastIndex(of: element) {
                        close(from: index, open: &open, into: &html)
                    }
                }
            }
        }
        close(from: 0, open: &open, into: &html)
        return Rendering(html: wantsHTML ? html.string : "", text: wantsText ? text.result : "")
    }

    /// Writes an allowed start tag, balanced and without attributes, except a checked `href`.
    private static func openTag(
        _ element: HTMLElement, href: String?, baseURL: URL?, open: inout [HTMLElement], into output: inout ByteWriter
    ) {
        if element.isVoid {
            output.append("<\(element.rawValue)>")
            return
        }
        guard open.count < maximumDepth else { return }
        if element == .a {
            guard let href, var link = safeLink(href, baseURL: baseURL) else { return }
            if let outer = open.lastIndex(of: .a) { close(from: outer, open: &open, into: &output) }
            output.append("<a href=\"")
            link.withUTF8 { escape($0, into: &output, attribute: true) }
            output.append("\" rel=\"noopener noreferrer\">")
        } else {
            output.append("<\(element.rawValue)>")
        }
        open.append(element)
    }

    private static func close(from index: Int, open: inout [HTMLElement], into output: inout ByteWriter) {
        while open.count > index {
            output.append("</\(open.removeLast().rawValue)>")
        }
    }
}

/// Collects text for ``HTMLSanitizer/text(_:)``: whitespace is held back until the next visible
/// character, so runs collapse and nothing trails; breaks are held back the same way.
struct PlainTextBuilder: ~Copyable {
    private var bytes: ByteWriter
    private var pendingSpace = false
    /// 0: none, 1: a line break, 2: a blank line.
    private var pendingBreak = 0

    init(capacity: Int) {
        bytes = ByteWriter(capacity: capacity)
    }

    var result: String { bytes.string }

    /// Where an element begins or ends: `lines` is its ``HTMLElement/textBreak``.
    mutating func boundary(_ lines: Int) {
        pendingBreak = max(pendingBreak, lines)
    }

    mutating func append(_ text: UnsafeBufferPointer<UInt8>) {
        var index = 0
        while index < text.count {
            // A run of whitespace (and no-break spaces, U+00A0) becomes one pending space.
            let byte = text[index]
            if byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D || byte == 0x0C {
                pendingSpace = true
                index += 1
                continue
            }
            if byte == 0xC2, index + 1 < text.count, text[index + 1] == 0xA0 {
                pendingSpace = true
                index += 2
                continue
            }
            // A word, copied at once.
            let start = index
            while index < text.count {
                let byte = text[index]
                if byte <= 0x20 || (byte == 0xC2 && index + 1 < text.count && text[index + 1] == 0xA0) { break }
                index += 1
            }
            if index == start {  // A control character that is not whitespace: kept as text.
                index += 1
            }
            if bytes.count > 0 {
                if pendingBreak > 0 {
                    bytes.append(pendingBreak == 2 ? "\n\n" : "\n")
                } else if pendingSpace {
                    bytes.append(" ")
                }
            }
            pendingBreak = 0
            pendingSpace = false
            bytes.append(UnsafeBufferPointer(rebasing: text[start..<index]))
        }
    }
}
