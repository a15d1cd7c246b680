import Foundation

/// The Netscape cookies.txt format that curl, wget and aria2c read and write and browsers'
/// exporters make: one cookie a line, seven tab-separated fields (domain, "include subdomains",
/// path, secure, expiry in seconds since 1970 with 0 for a session cookie, name, value);
/// `#HttpOnly_` before the domain marks an HttpOnly cookie; other lines starting with `#` and
/// empty ones are comments.
public enum CookiesFile {
    /// The cookies of a file's text.
    /// - Throws: `invalid_request` naming the first malformed line (its number, what is wrong).
    public static func parse(_ text: String, now: Date = Date()) throws(FerryError) -> [Cookie] {
        var cookies: [Cookie] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(raw)
            if line.hasSuffix("\r") { line = line.dropLast() }
            var httpOnly = false
            if line.hasPrefix("#HttpOnly_") {
                httpOnly = true
                line = line.dropFirst("#HttpOnly_".count)
            } else if line.hasPrefix("#") || line.allSatisfy(\.isWhitespace) {
                continue
            }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let number = index + 1
            // A cookie without a value is written with six fields by some exporters.
            guard fields.count == 7 || fields.count == 6 else {
                throw FerryError.invalidRequest(
                    "Line \(number) of the cookies file is not a cookie: 7 tab-separated fields (domain, subdomains, path, secure, expiry, name, value) were expected, \(fields.count) found."
                )
            }
            func flag(_ text: String, _ what: String) throws(FerryError) -> Bool {
                switch text.uppercased() {
                case "TRUE": return true
                case "FALSE": return false
                default: throw FerryError.invalidRequest("Line \(number) of the cookies file: \(what) must be TRUE or FALSE, not '\(text.prefix(20))'.")
                }
            }
            var domain = fields[0].lowercased()
            let subdomains = try flag(fields[1], "the subdomains field")
            let secure = try flag(fields[3], "the secure field")
            guard let seconds = Double(fields[4]), seconds >= 0, seconds.isFinite else {
                throw FerryError.invalidRequest("Line \(number) of the cookies file: the expiry must be seconds since 1970, not '\(fields[4].prefix(20))'.")
            }
            let path = fields[2].isEmpty ? "/" : fields[2]
            guard path.hasPrefix("/") else { throw FerryError.invalidRequest("Line \(number) of the cookies file: the path must begin with '/'.") }
            if domain.hasPrefix(".") { domain.removeFirst() }
            let name = fields[5]
            let value = fields.count == 7 ? fields[6] : ""
            guard !domain.isEmpty, !name.isEmpty else {
                throw FerryError.invalidRequest("Line \(number) of the cookies file has no domain or no name.")
            }
            guard !(name + value + domain + path).contains("\0") else {
                throw FerryError.invalidRequest("Line \(number) of the cookies file holds a NUL.")
            }
            let expires = seconds == 0 ? nil : Date(timeIntervalSince1970: seconds)
            if let expires, expires <= now { continue }
            cookies.append(Cookie(
                name: name, value: value, domain: domain, hostOnly: !subdomains, path: path, expires: expires,
                secure: secure, httpOnly: httpOnly, created: now
            ))
        }
        return cookies
    }

    /// The cookies as a cookies.txt file (values included: it is an export).
    public static func text(_ cookies: [Cookie]) -> String {
        var lines = ["# Netscape HTTP Cookie File", "# Exported by Ferry: these lines hold secrets.", ""]
        for cookie in cookies {
            let domain = (cookie.httpOnly ? "#HttpOnly_" : "") + (cookie.hostOnly ? "" : ".") + cookie.domain
            let expires = cookie.expires.map { String(Int64($0.timeIntervalSince1970.rounded())) } ?? "0"
            lines.append([
                domain, cookie.hostOnly ? "FALSE" : "TRUE", cookie.path, cookie.secure ? "TRUE" : "FALSE", expires, cookie.name, cookie.value,
            ].joined(separator: "\t"))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
