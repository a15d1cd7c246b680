/// The HTML elements ``HTMLSanitizer`` treats by name; every other tag is `other`, unwrapped.
/// An enum rather than sets of names: a description has hundreds of tags, and each is looked up
/// once here instead of hashed against several sets.
enum HTMLElement: String, CaseIterable {
    // Kept (the allowlist).
    case a, b, blockquote, br, code, em, h1, h2, h3, h4, h5, h6, hr, i, li, ol, p, pre, strong, u, ul
    // Dropped with their content, which browsers read as raw text.
    case script, style, textarea, title, xmp, iframe, noembed, noframes, noscript, plaintext
    // Dropped with their content.
    case object, embed, applet, template, svg, math, select, head, frameset, frame, canvas, audio, video, param
    // Unwrapped, but breaking lines in plain text.
    case div, tr, dt, dd, figcaption, dl, table, figure, section, article, header, footer, aside, nav, address
    // Unwrapped, and never closed.
    case img, source, track, input, meta, link, area, base, col, wbr
    case other

    init(name: String) {
        self = Self.byName[name] ?? .other
    }

    private static let byName: [String: HTMLElement] = Dictionary(
        uniqueKeysWithValues: allCases.filter { $0 != .other }.map { ($0.rawValue, $0) })

    /// On the allowlist: written out, without attributes (but `href` on `a`).
    var isAllowed: Bool {
        switch self {
        case .a, .b, .blockquote, .br, .code, .em, .h1, .h2, .h3, .h4, .h5, .h6, .hr, .i, .li, .ol, .p, .pre,
            .strong, .u, .ul:
            true
        default: false
        }
    }

    /// Its content is raw text to a browser (`</script` ends it, whatever comes before).
    var isRawText: Bool {
        switch self {
        case .script, .style, .textarea, .title, .xmp, .iframe, .noembed, .noframes, .noscript, .plaintext: true
        default: false
        }
    }

    /// Dropped with everything inside.
    var isDropped: Bool {
        switch self {
        case .object, .embed, .applet, .template, .svg, .math, .select, .head, .frameset, .frame, .canvas,
            .audio, .video, .param:
            true
        default: false
        }
    }

    var isVoid: Bool {
        switch self {
        case .br, .hr, .img, .embed, .frame, .param, .source, .track, .input, .meta, .link, .area, .base, .col,
            .wbr:
            true
        default: false
        }
    }

    /// What it leaves in plain text: 2 for a blank line (paragraphs, headings, lists), 1 for a
    /// line break, 0 for nothing.
    var textBreak: Int {
        switch self {
        case .p, .h1, .h2, .h3, .h4, .h5, .h6, .blockquote, .pre, .ul, .ol, .dl, .table, .hr, .figure, .section,
            .article, .header, .footer, .aside, .nav, .address:
            2
        case .br, .div, .li, .tr, .dt, .dd, .figcaption: 1
        default: 0
        }
    }
}
