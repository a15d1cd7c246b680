import Foundation

/// A proxy to reach servers through: `http://[user:password@]host:port` (an HTTP proxy, which
/// Ferry asks to `CONNECT`, with Basic credentials if given) or `socks5://host:port` /
/// `socks5h://host:port` (SOCKS5; either way the proxy resolves the server's name). The
/// credentials are secrets: ``redacted`` is what may be shown or logged.
public struct ProxyURL: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case http
        case socks5
    }

    public var kind: Kind
    public var host: String
    public var port: Int
    public var user: String?
    public var password: String?

    /// Parses a proxy URL as `http_proxy` and `--proxy` give it; a bare `host:port` is an HTTP
    /// proxy, as curl takes it.
    /// - Throws: `invalid_request` saying what is wrong (an unknown scheme, no host, a bad port,
    ///   SOCKS credentials, which Ferry cannot send).
    public init(parsing text: String) throws(FerryError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let shown = Self.redact(trimmed)
        let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
        guard let components = URLComponents(string: withScheme), let scheme = components.scheme?.lowercased() else {
            throw FerryError.invalidRequest("'\(shown.prefix(100))' is not a proxy URL; write it like http://proxy.example:3128 or socks5h://127.0.0.1:1080.")
        }
        switch scheme {
        case "http": kind = .http
        case "socks5", "socks5h": kind = .socks5
        default:
            throw FerryError.invalidRequest(
                "The proxy '\(shown.prefix(100))' uses \(scheme)://, which Ferry does not speak; use http://, socks5:// or socks5h://."
            )
        }
        guard let host = components.host, !host.isEmpty else {
            throw FerryError.invalidRequest("The proxy '\(shown.prefix(100))' names no host.")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil else {
            throw FerryError.invalidRequest("The proxy '\(shown.prefix(100))' has a path or query; give only scheme, host and port.")
        }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let port = components.port ?? (kind == .http ? 3128 : 1080)  // as curl assumes
        guard (1...65535).contains(port) else { throw FerryError.invalidRequest("The proxy '\(shown.prefix(100))' has no valid port.") }
        self.port = port
        user = components.percentEncodedUser.flatMap { $0.removingPercentEncoding }
        password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        if kind == .socks5, user != nil || password != nil {
            throw FerryError.invalidRequest("Ferry cannot send a user name and password to a SOCKS5 proxy ('\(shown.prefix(100))'); use one that needs none, or an HTTP proxy.")
        }
    }

    /// `http://ann:<redacted>@proxy:3128`: the URL with its password hidden.
    public var redacted: String {
        let credentials = user.map { user in password == nil ? "\(user)@" : "\(user):<redacted>@" } ?? ""
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(kind == .http ? "http" : "socks5h")://\(credentials)\(shownHost):\(port)"
    }

    public var description: String { redacted }

    /// `text` with the password of any `user:password@` replaced, for messages about a URL that
    /// does not parse.
    public static func redact(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        guard start < at, let colon = text[start..<at].firstIndex(of: ":") else { return text }
        return String(text[..<text.index(after: colon)]) + "<redacted>" + String(text[at...])
    }
}
