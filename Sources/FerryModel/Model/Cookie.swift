import Foundation

/// A cookie a server set (RFC 6265's storage model), kept in its session's jar.
public struct Cookie: Codable, Sendable, Hashable {
    public var name: String
    /// A secret: every listing shows `<redacted>`; only an export (`ferry session cookies
    /// export`) writes it.
    public var value: String
    /// The host it was set by (``hostOnly``), or the domain it covers with its subdomains.
    public var domain: String
    /// True: sent to exactly ``domain``; false: to it and its subdomains.
    public var hostOnly: Bool
    public var path: String
    /// nil: a session cookie (kept until the jar is cleared: a daemon has no browser session to end).
    public var expires: Date?
    /// Sent over https only.
    public var secure: Bool
    public var httpOnly: Bool
    public var sameSite: SameSite?
    /// When it was first set: ties in the `Cookie` header's order go to the older one.
    public var created: Date

    public enum SameSite: String, Codable, Sendable {
        case strict, lax, none
    }

    /// Makes one from its fields; each parameter sets the property of the same name.
    public init(
        name: String, value: String, domain: String, hostOnly: Bool = true, path: String = "/", expires: Date? = nil,
        secure: Bool = false, httpOnly: Bool = false, sameSite: SameSite? = nil, created: Date = Date()
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.hostOnly = hostOnly
        self.path = path
        self.expires = expires
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.created = created
    }

    /// The same cookie with its value hidden, as listings show it.
    public var redacted: Cookie {
        var copy = self
        copy.value = "<redacted>"
        return copy
    }
}

/// `GET /v1/sessions/{session}/cookies`: the session's jar, values redacted.
public struct CookieList: Codable, Sendable, Hashable {
    public var session: String
    public var cookies: [Cookie]

    public init(session: String, cookies: [Cookie]) {
        self.session = session
        self.cookies = cookies
    }
}

/// The answer to `POST` and `DELETE /v1/sessions/{session}/cookies`: how many cookies came in
/// (an import) or went (a clear), and the jar after (values redacted).
public struct CookieJarChange: Codable, Sendable, Hashable {
    public var session: String
    public var imported: Int
    public var cleared: Int
    public var cookies: [Cookie]

    public init(session: String, imported: Int = 0, cleared: Int = 0, cookies: [Cookie]) {
        self.session = session
        self.imported = imported
        self.cleared = cleared
        self.cookies = cookies
    }
}

/// `POST /v1/sessions/{session}/login`: a form to post to a site's login URL.
public struct SessionLoginRequest: Codable, Sendable, Hashable {
    public var url: String
    /// The form's fields, in order (`user=ann`, `password=…`). Sent, never kept.
    public var form: [FormField]

    public struct FormField: Codable, Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(url: String, form: [FormField]) {
        self.url = url
        self.form = form
    }
}

/// The answer to a login: where the redirects ended, with what status, and the jar after
/// (values redacted).
public struct SessionLogin: Codable, Sendable, Hashable {
    public var session: String
    public var status: Int
    public var url: String
    public var cookies: [Cookie]

    public init(session: String, status: Int, url: String, cookies: [Cookie]) {
        self.session = session
        self.status = status
        self.url = url
        self.cookies = cookies
    }
}
