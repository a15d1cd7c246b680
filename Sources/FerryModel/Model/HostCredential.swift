import Foundation

/// A login kept in the daemon's credential store for one host (`ferry credentials add HOST`):
/// answered when that host asks who the user is (401), over https only unless a transfer allows
/// plain http, and never sent anywhere else. What the API shows: the password never leaves the
/// daemon.
public struct HostCredential: Codable, Sendable, Hashable {
    /// The host name, lower-cased, with `:PORT` when the login is for one port only.
    public var host: String
    /// The user name.
    public var user: String
    /// When it was added or last replaced.
    public var addedAt: Date

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(host: String, user: String, addedAt: Date) {
        self.host = host
        self.user = user
        self.addedAt = addedAt
    }

    /// `host` or `host:port` as the store keys it: lower-cased, a valid host name or address.
    /// - Throws: ``FerryError`` `invalid_request` for anything else (a URL, a path, spaces).
    public static func normalizedHost(_ text: String) throws(FerryError) -> String {
        let lower = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard !lower.contains("/"), !lower.contains("@") else {
            throw FerryError.invalidRequest("'\(text.prefix(80))' is not a host name: give one like example.com or example.com:8443, not a URL.")
        }
        var host = Substring(lower)
        if let colon = lower.lastIndex(of: ":"), !lower.hasSuffix("]"), lower.firstIndex(of: ":") == colon || lower.hasPrefix("[") {
            guard let port = Int(lower[lower.index(after: colon)...]), (1...65535).contains(port) else {
                throw FerryError.invalidRequest("'\(text.prefix(80))' has no valid port after ':'.")
            }
            host = lower[..<colon]
        }
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789.-_[]:")
        guard !host.isEmpty, host.utf8.count <= 253, host.unicodeScalars.allSatisfy({ allowed.contains($0) }) else {
            throw FerryError.invalidRequest("'\(text.prefix(80))' is not a host name: give one like example.com or example.com:8443, not a URL.")
        }
        return lower
    }
}

/// `POST /v1/credentials`: keep a login for a host (replacing the one it had).
public struct HostCredentialRequest: Codable, Sendable {
    /// `example.com`, or `example.com:8443` for that port only.
    public var host: String
    /// The user name to log in as.
    public var user: String
    /// Its password: kept by the daemon, never read back.
    public var password: String

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(host: String, user: String, password: String) {
        self.host = host
        self.user = user
        self.password = password
    }
}

/// `GET /v1/credentials`: the store's logins, without their passwords.
public struct HostCredentialList: Codable, Sendable, Hashable {
    /// The logins, by host.
    public var credentials: [HostCredential]

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(credentials: [HostCredential]) { self.credentials = credentials }
}

extension HostCredential {
    /// `https://ann:<redacted>@host/file`: a URL's password hidden (only in its authority, before
    /// the path), for every place a transfer's URL is shown.
    public static func redactingPassword(in url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let authorityEnd = url[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        let authority = url[scheme.upperBound..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return url }
        return String(url[..<url.index(after: colon)]) + "<redacted>" + String(url[at...])
    }
}
