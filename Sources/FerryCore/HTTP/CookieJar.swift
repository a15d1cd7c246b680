import FerryModel
import Foundation

/// A session's cookies, with RFC 6265's rules for keeping and sending them: `Set-Cookie` parsed
/// (§5.2) and stored (§5.3: domain, path, expiry, Secure; the `__Secure-`/`__Host-` prefixes of
/// its successor draft), and the `Cookie` header made for a request (§5.4, with SameSite=Strict
/// cookies kept to requests whose chain began on the same site). A value: the engine keeps one
/// per session (``CookieJars``), this type only decides.
///
/// There is no public suffix list here: a Domain attribute of one label ("com") is refused
/// unless it is the host itself, but "co.uk" is not recognised as a suffix.
package struct CookieJar: Sendable, Hashable {
    package private(set) var cookies: [Cookie] = []

    /// RFC 6265 §6.1's least limits, as browsers keep them.
    static let maxPerDomain = 50
    static let maxCookies = 3000
    static let maxBytes = 4096

    package init(_ cookies: [Cookie] = []) {
        for cookie in cookies { store(cookie) }
    }

    // MARK: Receiving

    /// Takes one `Set-Cookie` value from a response to `url`; one it must ignore changes nothing.
    /// - Returns: whether the jar changed.
    @discardableResult
    package mutating func receive(_ header: String, from url: URL, now: Date) -> Bool {
        guard let host = url.host?.lowercased(), !host.isEmpty, let parsed = Self.parse(header, now: now) else { return false }
        let secureOrigin = url.scheme?.lowercased() == "https"
        var cookie = Cookie(
            name: parsed.name, value: parsed.value, domain: host, hostOnly: true,
            path: parsed.path ?? Self.defaultPath(url), expires: parsed.expires, secure: parsed.secure,
            httpOnly: parsed.httpOnly, sameSite: parsed.sameSite, created: now
        )
        if var domain = parsed.domain {
            if domain.hasPrefix(".") { domain.removeFirst() }
            // Not for a host it cannot be set by, nor for a top-level name ("com").
            if domain != host { guard Self.domainMatches(host, domain), domain.contains(".") else { return false } }
            cookie.domain = domain
            cookie.hostOnly = false
        }
        if cookie.secure, !secureOrigin { return false }
        if cookie.name.hasPrefix("__Secure-"), !(cookie.secure && secureOrigin) { return false }
        if cookie.name.hasPrefix("__Host-"), !(cookie.secure && secureOrigin && cookie.hostOnly && cookie.path == "/") { return false }
        let before = cookies
        if let expires = cookie.expires, expires <= now {
            cookies.removeAll { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
        } else {
            store(cookie)
        }
        return cookies != before
    }

    /// Keeps `cookie`, replacing the one of the same name, domain and path (whose creation time
    /// it takes), within the limits (the oldest go first).
    package mutating func store(_ cookie: Cookie) {
        guard cookie.name.utf8.count + cookie.value.utf8.count <= Self.maxBytes else { return }
        var cookie = cookie
        if let index = cookies.firstIndex(where: { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }) {
            cookie.created = cookies[index].created
            cookies[index] = cookie
        } else {
            cookies.append(cookie)
        }
        let sameDomain = cookies.filter { $0.domain == cookie.domain }
        if sameDomain.count > Self.maxPerDomain, let oldest = sameDomain.min(by: { $0.created < $1.created }) {
            cookies.removeAll { $0 == oldest }
        }
        if cookies.count > Self.maxCookies, let oldest = cookies.min(by: { $0.created < $1.created }) {
            cookies.removeAll { $0 == oldest }
        }
    }

    /// Forgets the cookies that have expired by `now`.
    package mutating func removeExpired(now: Date) {
        cookies.removeAll { $0.expires.map { $0 <= now } ?? false }
    }

    // MARK: Sending

    /// The `Cookie` header for a request to `url` (nil: none to send).
    /// - Parameter chainSite: the site of the request that began the chain (``site(of:)``): a
    ///   redirect from another site does not carry SameSite=Strict cookies.
    package func header(for url: URL, now: Date, chainSite: String? = nil) -> String? {
        guard let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        let secure = url.scheme?.lowercased() == "https"
        let path = url.path.isEmpty ? "/" : url.path
        let site = Self.site(of: host)
        let matching = cookies.filter { cookie in
            (cookie.hostOnly ? cookie.domain == host : Self.domainMatches(host, cookie.domain))
                && Self.pathMatches(path, cookie.path)
                && (!cookie.secure || secure)
                && !(cookie.expires.map { $0 <= now } ?? false)
                && !(cookie.sameSite == .strict && chainSite != nil && chainSite != site)
        }
        guard !matching.isEmpty else { return nil }
        return matching.sorted { a, b in a.path.count != b.path.count ? a.path.count > b.path.count : a.created < b.created }
            .map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    // MARK: Rules

    /// §5.1.3: the host is the domain, or a name under it (never an IP address under another).
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        if host == domain { return true }
        return host.hasSuffix("." + domain) && !isIPAddress(host)
    }

    /// §5.1.4: the request path is the cookie's, or under it.
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || requestPath.dropFirst(cookiePath.count).first == "/"
    }

    /// §5.1.4's default path: the request path up to its last `/`.
    static func defaultPath(_ url: URL) -> String {
        let path = url.path
        guard path.hasPrefix("/"), let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
        return String(path[..<last])
    }

    /// The site a host belongs to, for SameSite: its last two labels (an address is its own).
    package static func site(of host: String) -> String {
        let host = host.lowercased()
        if isIPAddress(host) { return host }
        return host.split(separator: ".").suffix(2).joined(separator: ".")
    }

    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || (host.split(separator: ".").count == 4 && host.split(separator: ".").allSatisfy { UInt8($0) != nil })
    }

    // MARK: Parsing Set-Cookie (§5.2)

    struct Parsed: Equatable {
        var name: String
        var value: String
        var expires: Date?
        var domain: String?
        var path: String?
        var secure = false
        var httpOnly = false
        var sameSite: Cookie.SameSite?
    }

    static func parse(_ header: String, now: Date) -> Parsed? {
        var parts = header.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        let pair = parts.removeFirst()
        guard let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, !(name + value).contains(where: { $0.isNewline || $0 == "\0" }) else { return nil }
        var parsed = Parsed(name: name, value: value)
        var maxAge: Date?
        for attribute in parts {
            let pieces = attribute.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
            let text = pieces.count > 1 ? pieces[1].trimmingCharacters(in: .whitespaces) : ""
            switch key {
            case "expires":
                if let date = cookieDate(text) { parsed.expires = date }
            case "max-age":
                guard let first = text.first, first == "-" || first.isNumber, text.dropFirst().allSatisfy(\.isNumber) else { continue }
                let seconds = Double(text) ?? (first == "-" ? -1 : Double(Int32.max))
                maxAge = seconds <= 0 ? .distantPast : now.addingTimeInterval(min(seconds, 400 * 86_400))
            case "domain":
                guard !text.isEmpty else { continue }
                parsed.domain = text.lowercased()
            case "path":
                parsed.path = text.hasPrefix("/") ? text : nil
            case "secure": parsed.secure = true
            case "httponly": parsed.httpOnly = true
            case "samesite": parsed.sameSite = Cookie.SameSite(rawValue: text.lowercased())
            default: continue
            }
        }
        if let maxAge { parsed.expires = maxAge }
        return parsed
    }

    /// §5.1.1's cookie-date: tokens in any order (a time, a day, a month, a year); nil when one
    /// is missing or out of range.
    static func cookieDate(_ text: String) -> Date? {
        let delimiters = CharacterSet(charactersIn: "\t !\"#$%&'()*+,-./;<=>?@[\\]^_`{|}~")
        var time: (Int, Int, Int)?
        var day: Int?, month: Int?, year: Int?
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        for token in text.components(separatedBy: delimiters) where !token.isEmpty {
            if time == nil {
                let fields = token.split(separator: ":", omittingEmptySubsequences: false)
                if fields.count == 3, fields.allSatisfy({ (1...2).contains($0.prefix { $0.isNumber }.count) }) {
                    let numbers = fields.map { Int($0.prefix { $0.isNumber })! }
                    time = (numbers[0], numbers[1], numbers[2])
                    continue
                }
            }
            let digits = token.prefix { $0.isNumber }
            if day == nil, (1...2).contains(digits.count) {
                day = Int(digits)
                continue
            }
            if month == nil, let index = months.firstIndex(of: String(token.prefix(3)).lowercased()) {
                month = index + 1
                continue
            }
            if year == nil, (2...4).contains(digits.count), var value = Int(digits) {
                if (70...99).contains(value) { value += 1900 } else if (0...69).contains(value) { value += 2000 }
                year = value
            }
        }
        guard let (hour, minute, second) = time, let day, let month, let year,
            (1...31).contains(day), year >= 1601, hour <= 23, minute <= 59, second <= 59
        else { return nil }
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return HTTPDate.utcCalendar.date(from: components)
    }
}
