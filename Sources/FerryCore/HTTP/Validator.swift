import FerryModel

/// The validator that proves a resumed file is the one we started: the strong ETag, or else the
/// Last-Modified date (DESIGN: resume protocol). A weak ETag (`W/"..."`) cannot be used in
/// `If-Range` (RFC 9110 §13.1.5), so it does not count.
package enum Validator {
    package static func from(etag: String?, lastModified: String?) -> String? {
        if let etag = etag?.trimmingWhitespace(), etag.hasPrefix("\""), etag.count >= 2, etag.hasSuffix("\"") {
            return String(etag)
        }
        if let lastModified = lastModified?.trimmingWhitespace(), HTTPDate.parse(String(lastModified)) != nil {
            return String(lastModified)
        }
        return nil
    }
}
