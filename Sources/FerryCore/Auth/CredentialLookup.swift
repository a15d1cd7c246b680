import FerryModel
import Foundation

/// A user name and password for one origin, and where it came from.
package struct HTTPCredential: Sendable, Hashable {
    package enum Source: Sendable, Hashable, CustomStringConvertible {
        /// `https://user:password@host/…`
        case url
        /// `--user NAME --password-stdin`
        case option
        /// A `.netrc` file.
        case netrc(String)
        /// `ferry credentials add HOST`
        case store

        package var description: String {
            switch self {
            case .url: "the URL"
            case .option: "--user"
            case .netrc(let path): path
            case .store: "the credential store"
            }
        }
    }

    package var user: String
    package var password: String
    package var source: Source
}

/// Where a transfer's credentials come from, first to last: the URL's own user info and
/// `--user` (for the URL's own origin only: scheme, host and port), then a `.netrc` file (read
/// at the moment a server asks, so its passwords are never journaled), then the credential
/// store; the last two for the host they name, and over https only unless ``allowsPlainHTTP``.
package struct CredentialLookup: Sendable {
    /// The origin of the transfer's URL (``HTTPFetcher/origin(of:)``).
    package var origin: String
    /// The user info of the transfer's URL.
    package var inURL: (user: String, password: String)?
    /// `--user`, and its password when given.
    package var user: String?
    package var password: String?
    package var netrcFile: String?
    package var allowsPlainHTTP: Bool
    /// The store's logins (read when a server asks).
    package var store: @Sendable () async throws -> [StoredCredential]

    /// What the lookup depends on besides the store: a change starts its answers afresh.
    var fingerprint: String {
        [origin, inURL?.user ?? "", inURL?.password ?? "", user ?? "", password ?? "", netrcFile ?? "", allowsPlainHTTP ? "1" : "0"]
            .joined(separator: "\u{0}")
    }

    package init(
        url: URL, options: TransferOptions, store: @escaping @Sendable () async throws -> [StoredCredential] = { [] }
    ) {
        origin = HTTPFetcher.origin(of: url)
        if let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let user = components.user {
            inURL = (user, components.password ?? "")
        }
        user = options.user
        password = options.password
        netrcFile = options.netrcFile
        allowsPlainHTTP = options.authOverHTTP ?? false
        self.store = store
    }

    /// The credential to answer `url`'s challenge with, if there is one.
    /// - Throws: ``FerryError`` `authentication_failed` when the only one is from a `.netrc` or
    ///   the store and `url` is plain http (unless allowed); `invalid_request` for a `.netrc`
    ///   others can read or that is malformed.
    package func credential(for url: URL) async throws -> HTTPCredential? {
        let sameOrigin = HTTPFetcher.origin(of: url) == origin
        if sameOrigin, let inURL { return HTTPCredential(user: inURL.user, password: inURL.password, source: .url) }
        if sameOrigin, let user, let password { return HTTPCredential(user: user, password: password, source: .option) }
        // `--user NAME` without a password: NAME's password from the .netrc or the store.
        let login = sameOrigin ? user : nil
        let host = (url.host ?? "").lowercased()
        var found: HTTPCredential?
        if let netrcFile {
            let netrc = try await BlockingIO.run { () throws(FerryError) in try Netrc.load(path: netrcFile) }
            if let entry = netrc.entry(host: host, login: login), let password = entry.password {
                found = HTTPCredential(user: entry.login ?? login ?? "", password: password, source: .netrc(netrcFile))
            }
        }
        if found == nil {
            let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
            // The store writes an IPv6 address in brackets ([::1]:8443); URL.host has none.
            let named = host.contains(":") ? "[\(host)]" : host
            let logins = try await store()
            if let stored = logins.first(where: { $0.host == "\(named):\(port)" }) ?? logins.first(where: { $0.host == named }),
                login == nil || stored.user == login
            {
                found = HTTPCredential(user: stored.user, password: stored.password, source: .store)
            }
        }
        guard let found else { return nil }
        if url.scheme?.lowercased() == "http", !allowsPlainHTTP {
            throw FerryError(
                .authenticationFailed,
                "\(url.host ?? "The server") asks who you are over plain http, and Ferry has the user \(found.user)'s password from \(found.source), "
                    + "but will not send it where anyone on the way can read it. Use https, or allow it for this download with --auth-over-http."
            )
        }
        return found
    }
}
