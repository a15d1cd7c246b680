import FerryModel
import Foundation

/// Turns untrusted names (Content-Disposition, URL paths, catalog metadata) into safe file names
/// inside one library folder: no path separators, no control or bidi characters, no leading
/// dots, a length cap, an extension, and `name (2).ext` variants for collisions.
public enum FileNamer {
    /// Longest name in UTF-8 bytes; ext4 allows 255, and `" (999)"` must still fit.
    public static let maxBytes = 200

    /// A safe single path component, or nil when nothing usable is left.
    ///
    /// `../../etc/passwd` → `passwd`; `.bashrc` → `bashrc`; `a\u{202E}3pm.exe` → `a3pm.exe`.
    public static func sanitize(_ raw: String) -> String? {
        // Scalars, not Characters, throughout: a Character can hold a separator or a dot behind
        // a mark joined to it. `\u{06DD}/` (a prepended mark, then `/`) was one Character that
        // no split on "/" saw, and the mark, a format character, was dropped after it: the `/`
        // stood alone in the name (found by tests/torture/fuzz).
        let component = raw.unicodeScalars.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last ?? []
        let kept = component.filter { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse: false
            default: true
            }
        }
        let trimmed = { (scalar: Unicode.Scalar) in scalar == "." || scalar.properties.isWhitespace }
        guard let first = kept.firstIndex(where: { !trimmed($0) }), let last = kept.lastIndex(where: { !trimmed($0) }) else {
            return nil
        }
        var name = String.UnicodeScalarView()
        name.append(contentsOf: kept[first...last])
        return truncated(String(name))
    }

    /// Cuts a name to ``maxBytes`` on a character boundary, keeping a short extension.
    static func truncated(_ name: String) -> String {
        guard name.utf8.count > maxBytes else { return name }
        var (stem, ext) = split(name)
        // Ten characters can be hundreds of bytes (emoji sequences, stacked accents); such an
        // extension would leave no room for the stem, so it is cut like the rest of the name.
        if let long = ext, long.utf8.count > 40 { (stem, ext) = (name, nil) }
        let extPart = ext.map { ".\($0)" } ?? ""
        var cut = ""
        for character in stem {
            if cut.utf8.count + String(character).utf8.count + extPart.utf8.count > maxBytes { break }
            cut.append(character)
        }
        if cut.isEmpty {
            // The first character alone is too long (a letter with hundreds of combining marks):
            // cut inside it, on a scalar boundary, rather than return a bare `.ext` or nothing.
            for scalar in stem.unicodeScalars {
                if cut.utf8.count + scalar.utf8.count + extPart.utf8.count > maxBytes { break }
                cut.unicodeScalars.append(scalar)
            }
        }
        return cut + extPart
    }

    /// `a.b.mp3` → (`a.b`, `mp3`); `README` → (`README`, nil). Extensions longer than 10 or with
    /// spaces are not extensions.
    static func split(_ name: String) -> (stem: String, ext: String?) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, nil) }
        let ext = name[name.index(after: dot)...]
        guard !ext.isEmpty, ext.count <= 10, !ext.contains(where: { $0.isWhitespace }) else { return (name, nil) }
        return (String(name[..<dot]), String(ext))
    }

    /// The name a download gets: from Content-Disposition, else the URL's last path component,
    /// else the caller's suggestion (catalog metadata), else `download`; with an extension from
    /// the Content-Type when it has none.
    public static func name(
        contentDisposition: String?, url: URL?, suggested: String?, contentType: String?
    ) -> String {
        let candidates: [String?] = [
            contentDisposition.flatMap(ContentDisposition.fileName),
            url.map { $0.lastPathComponent == "/" ? "" : $0.lastPathComponent },
            suggested,
        ]
        let base = candidates.lazy.compactMap { $0.flatMap(sanitize) }.first ?? "download"
        if split(base).ext == nil, let ext = contentType.flatMap(fileExtension(forContentType:)) {
            return truncated("\(base).\(ext)")
        }
        return base
    }

    /// A caller's chosen name (`Artist - Track`, `2024-05-01 Title`), made safe, with an extension
    /// from the Content-Type or else the URL's when it has none.
    public static func name(preferred: String, contentType: String?, url: URL?) -> String {
        let base = sanitize(preferred) ?? "download"
        guard split(base).ext == nil else { return base }
        let urlExtension = url.map(\.pathExtension).flatMap { ext in
            ext.count <= 5 && !ext.isEmpty && ext.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } ? ext.lowercased() : nil
        }
        guard let ext = contentType.flatMap(fileExtension(forContentType:)) ?? urlExtension else { return base }
        return truncated("\(base).\(ext)")
    }

    /// `name.ext` → `name (n).ext` for n ≥ 2. Not cut to ``maxBytes``: that would cut off the
    /// ` (n)` that makes the name unique; ``maxBytes`` leaves room for it.
    public static func variant(of name: String, number: Int) -> String {
        guard number > 1 else { return name }
        let (stem, ext) = split(name)
        return "\(stem) (\(number))" + (ext.map { ".\($0)" } ?? "")
    }

    public static func fileExtension(forContentType contentType: String) -> String? {
        let type = contentType.split(separator: ";").first.map { $0.trimmingWhitespace().lowercased() } ?? ""
        return extensions[type]
    }

    static let extensions: [String: String] = [
        "audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/mp4": "m4a", "audio/x-m4a": "m4a",
        "audio/m4a": "m4a", "audio/aac": "aac", "audio/ogg": "ogg", "audio/opus": "opus",
        "audio/flac": "flac", "audio/x-flac": "flac", "audio/wav": "wav", "audio/x-wav": "wav",
        "video/mp4": "mp4", "video/x-m4v": "m4v", "video/quicktime": "mov", "video/webm": "webm",
        "image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp",
        "application/pdf": "pdf", "application/zip": "zip", "application/gzip": "gz",
        "application/x-tar": "tar", "application/json": "json", "application/xml": "xml",
        "application/rss+xml": "xml", "text/plain": "txt", "text/html": "html", "text/csv": "csv",
    ]
}
