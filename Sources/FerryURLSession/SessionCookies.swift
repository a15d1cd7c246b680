import Synchronization

/// Where a session's requests get their cookies and its responses leave them: the
/// configuration's `HTTPCookieStorage`, or, for an ephemeral session, memory that goes with it.
final class SessionCookies: Sendable {
    private let storage: HTTPCookieStorageBox?
    private let memory = Mutex<[HTTPCookie]>([])
    private let enabled: Bool
    private let policy: HTTPCookie.AcceptPolicy

    init(_ configuration: URLSessionConfiguration) {
        enabled = configuration.httpShouldSetCookies
        policy = configuration.httpCookieAcceptPolicy
        storage = configuration.httpCookieStorage.map(HTTPCookieStorageBox.init)
    }

    /// The `Cookie` header for `url`, if any cookie applies.
    func header(for url: URL) -> String? {
        guard enabled, policy != .never else { return nil }
        let cookies: [HTTPCookie]
        if let storage {
            cookies = storage.value.cookies(for: url) ?? []
        } else {
            let now = Date()
            cookies = memory.withLock { jar in
                jar.removeAll { ($0.expiresDate ?? .distantFuture) <= now }
                return jar.filter { Self.applies($0, to: url) }
            }
        }
        return HTTPCookie.requestHeaderFields(with: cookies)["Cookie"]
    }

    /// Keeps the cookies a response to `url` set.
    func keep(_ headers: [String: String], from url: URL, mainDocument: URL?) {
        guard enabled, policy != .never else { return }
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: headers, for: url)
        guard !cookies.isEmpty else { return }
        if let storage {
            storage.value.setCookies(cookies, for: url, mainDocumentURL: mainDocument)
            return
        }
        memory.withLock { jar in
            for cookie in cookies {
                jar.removeAll { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
                if (cookie.expiresDate ?? .distantFuture) > Date() { jar.append(cookie) }
            }
        }
    }

    /// RFC 6265's domain and path match, and Secure only over https.
    static func applies(_ cookie: HTTPCookie, to url: URL) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        let domain = cookie.domain.lowercased()
        let hostMatches = domain.hasPrefix(".")
            ? host == domain.dropFirst() || host.hasSuffix(domain)
            : host == domain
        let path = url.path.isEmpty ? "/" : url.path
        let pathMatches = path == cookie.path || path.hasPrefix(cookie.path.hasSuffix("/") ? cookie.path : cookie.path + "/")
        return hostMatches && pathMatches && (!cookie.isSecure || url.scheme == "https")
    }
}

/// HTTPCookieStorage locks itself; it is not marked Sendable.
struct HTTPCookieStorageBox: @unchecked Sendable {
    let value: HTTPCookieStorage
}
