extension OPML {
    /// An OPML 2.0 document listing `outlines`, each as `<outline type="rss" text title xmlUrl
    /// htmlUrl/>`. Everything is escaped, and characters XML cannot hold are left out, so any
    /// title makes a file that ``parse(_:maximumBytes:)`` (and other apps) read back as written
    /// (apart from runs of whitespace, which titles do not keep).
    public static func export(_ outlines: [Outline], title: String) -> String {
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<opml version="2.0">"#,
            "  <head>",
            "    <title>\(escape(title))</title>",
            "  </head>",
            "  <body>",
        ]
        for outline in outlines {
            let name = escape(outline.title)
            var element = #"    <outline type="rss" text="\#(name)" title="\#(name)""#
            element += #" xmlUrl="\#(escape(outline.xmlURL.absoluteString))""#
            if let htmlURL = outline.htmlURL {
                element += #" htmlUrl="\#(escape(htmlURL.absoluteString))""#
            }
            lines.append(element + "/>")
        }
        lines += ["  </body>", "</opml>", ""]
        return lines.joined(separator: "\n")
    }

    /// Escaped for XML text and double-quoted attributes: markup characters as entities, tabs and
    /// line breaks as references (an attribute would turn them into spaces), other characters
    /// XML forbids dropped.
    static func escape(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "\t": output += "&#9;"
            case "\n": output += "&#10;"
            case "\r": output += "&#13;"
            default:
                if XMLRepair.Scanner.isXMLCharacter(scalar.value) { output.unicodeScalars.append(scalar) }
            }
        }
        return output
    }
}
