import AsyncHTTPClient
import FerryModel
import Foundation
import Logging
import NIOCore

/// GET with Ferry's own redirect handling (see ``RedirectPolicy``): every hop is checked
/// before it is requested. Range headers go to every hop; configured extra headers too, except
/// credentials, which never leave the origin they were configured for. A 401 is answered by the
/// transfer's ``Authenticator`` (Basic or Digest, credentials for that origin only), and a
/// URL's `user:password@` never goes on the wire as such: it is one of those credentials.
package struct HTTPFetcher: Sendable {
    let clients: HTTPClients
    let redirects: RedirectPolicy
    let userAgent: String
    /// Sessions' cookie jars: sent with each hop, and what each hop sets kept (nil: no cookies).
    var cookies: SessionCookies? = nil
    let logger: Logger
    /// Each transfer's answers to servers that asked who the user is.
    let authenticators = Authenticators()

    /// - Parameters:
    ///   - headers: protocol headers (Range, If-Range), sent to every hop.
    ///   - extra: configured headers (see ``TransferOptions/headers``).
    ///   - headTimeout: the most each hop may take to answer with a response head.
    ///   - options: the transfer's options, for its proxy (decided again for each hop).
    ///   - session: whose cookie jar the hops use (nil: none).
    ///   - form: a form to POST to `url` (a login): a 307 or 308 posts it again to the next hop,
    ///     any other redirect is followed with a GET, as browsers do.
    ///   - http1: over HTTP/1.1 even where the server offers HTTP/2.
    ///   - auth: answers 401s; nil leaves them to the caller (and so does a configured
    ///     `Authorization` header).
    /// - Returns: the first non-redirect response and the URL that gave it.
    func get(
        _ url: URL, headers: [(name: String, value: String)], extra: [(name: String, value: String)] = [],
        headTimeout: Duration? = nil, options: TransferOptions = TransferOptions(), session: String? = nil,
        form: String? = nil, http1: Bool = false, auth: Authenticator? = nil
    ) async throws -> (response: HTTPClientResponse, url: URL) {
        let url = Self.withoutUserInfo(url)
        var current = url
        var visited = [url]
        var form = form
        let tls = try clients.tlsConfiguration(for: options)
        let jar = session.flatMap { session in cookies.map { (session, $0) } }
        let chainSite = url.host.map(CookieJar.site(of:))
        let auth = extra.contains { $0.name.lowercased() == "authorization" } ? nil : auth
        var authorization = auth?.preemptive(for: current)
        var round = 0
        while true {
            // A pinned server is reached through its tunnel, which checks its key (see ``PinnedTunnel``).
            let tunnel = try await clients.pinnedTunnel(for: current, options: options, tls: tls)
            var request = HTTPClientRequest(url: tunnel?.url(for: current)?.absoluteString ?? current.absoluteString)
            if tunnel != nil {
                request.headers.add(name: "Host", value: Self.hostHeader(current))
            } else {
                request.tlsConfiguration = tls
            }
            request.headers.add(name: "User-Agent", value: userAgent)
            request.headers.add(name: "Accept-Encoding", value: "identity")
            if let form {
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(string: form))
            }
            if let (session, cookies) = jar, let cookie = try await cookies.header(session: session, url: current, chainSite: chainSite) {
                request.headers.add(name: "Cookie", value: cookie)
            }
            let sameOrigin = Self.origin(of: current) == Self.origin(of: url)
            for header in extra where sameOrigin || !TransferOptions.isSensitive(header: header.name) {
                request.headers.replaceOrAdd(name: header.name, value: header.value)
            }
            for header in headers { request.headers.replaceOrAdd(name: header.name, value: header.value) }
            if let authorization { request.headers.replaceOrAdd(name: "Authorization", value: authorization) }
            let deadline: NIODeadline = headTimeout.map { .now() + .init($0) } ?? .distantFuture
            let response: HTTPClientResponse
            if let tunnel {
                let mark = tunnel.failureMark
                do {
                    response = try await clients.direct.execute(request, deadline: deadline, logger: logger)
                } catch {
                    // The client saw a connection closed; the tunnel knows why.
                    switch tunnel.failure(after: mark) {
                    case let refusal as PinRefusal: throw CertificateRefusal(message: refusal.message)
                    case let failure?: throw failure
                    case nil: throw error
                    }
                }
            } else {
                response = try await clients.client(for: current, options: options, http1: http1).execute(request, deadline: deadline, logger: logger)
            }
            if let (session, cookies) = jar {
                try await cookies.receive(session: session, url: current, response.headers["Set-Cookie"])
            }
            if response.status == .unauthorized, let auth,
                let answer = try await auth.answer(challenges: response.headers["WWW-Authenticate"], url: current, round: round)
            {
                logger.debug("answering a challenge", metadata: ["http.url": "\(current)", "http.round": "\(round)"])
                _ = try? await response.body.collect(upTo: 64 * 1024)
                authorization = answer
                round += 1
                continue
            }
            guard RedirectPolicy.isRedirect(status: Int(response.status.code)) else { return (response, current) }
            let next = try redirects.next(location: response.headers.first(name: "Location"), from: current, visited: visited)
            logger.debug("redirect", metadata: ["http.from": "\(current)", "http.to": "\(next)"])
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if ![307, 308].contains(Int(response.status.code)) { form = nil }
            visited.append(next)
            current = Self.withoutUserInfo(next)
            authorization = auth?.preemptive(for: current)
            round = 0
        }
    }

    /// The Host header for `url`: its host, and its port when not the scheme's own.
    static func hostHeader(_ url: URL) -> String {
        let host = url.host ?? ""
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let port = url.port, port != (url.scheme?.lowercased() == "https" ? 443 : 80) else { return bracketed }
        return "\(bracketed):\(port)"
    }

    /// `url` without `user:password@`.
    static func withoutUserInfo(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), components.user != nil || components.password != nil else {
            return url
        }
        components.user = nil
        components.password = nil
        return components.url ?? url
    }

    /// An executor on one of the client's event loops (the next, round robin), to make a request
    /// and consume its body on (see ``EventLoopExecutor``).
    func executor() -> EventLoopExecutor {
        EventLoopExecutor(clients.direct.eventLoopGroup.next())
    }

    /// Scheme, host and port: where credentials may go.
    package static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}

/// A response status that is neither success nor redirect.
struct HTTPStatusFailure: Error {
    var status: Int
    var reason: String
    var url: URL
    var retryAfter: String?
    /// What a 400 page said of the client certificate (nginx's `ssl_verify_client`), if anything.
    var clientCertificate: ClientCertificateTrouble?

    enum ClientCertificateTrouble: Sendable {
        /// The server wants one and none was given.
        case missing
        /// The one given was refused (not signed by an authority the server trusts, expired).
        case refused

        /// From an error page's text: nginx's "No required SSL certificate was sent" and "The SSL
        /// certificate error"; nil when it says neither.
        init?(page: String, had: Bool) {
            let lower = page.lowercased()
            guard lower.contains("ssl certificate") || lower.contains("client certificate") else { return nil }
            self = had || lower.contains("certificate error") ? .refused : .missing
        }
    }
}
