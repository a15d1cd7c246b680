import FerryKit
import HTTPTypes
import Hummingbird

/// The front door of a listener beyond loopback (``RemoteRules``): a foreign Host, a request
/// from an untrusted peer on a proxied listener, a cross-site change and the one-time login link
/// are refused; the request is marked remote (only accounts count there) and carries the
/// client's address (a trusted proxy's `X-Forwarded-For`).
struct RemoteGuardMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext
    let rules: RemoteRules
    let tls: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let seen = try rules.see(
            peer: context.remoteAddress ?? "", tls: tls, host: request.head.authority, forwardedFor: request.headers[Self.forwardedFor],
            forwardedProto: request.headers[Self.forwardedProto], forwardedHost: request.headers[Self.forwardedHost]
        )
        var context = context
        context.remoteAddress = seen.client
        context.remote = .init(secure: seen.secure)
        let changes = request.method != .get && request.method != .head
        if let origin = request.headers[.origin] {
            if ExtensionAccess.isExtensionOrigin(origin) {
                throw FerryError(.forbiddenOrigin, "A browser extension talks to Ferry on its own machine (loopback), not over the network.")
            }
            if changes, !rules.sameOrigin(origin, as: seen) {
                throw FerryError(.forbiddenOrigin, "Requests that change state are not accepted from the web origin '\(origin.prefix(100))'.")
            }
        } else if changes, request.headers[Self.fetchSite] == "cross-site" {
            throw FerryError(.forbiddenOrigin, "Requests that change state are not accepted from another site.")
        }
        if request.uri.path == "/login" {
            throw FerryError(.forbidden, "The one-time login link works on the server's own screen only; log in with your name and password.")
        }
        return try await next(request, context)
    }

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    static let forwardedHost = HTTPField.Name("X-Forwarded-Host")!
    static let fetchSite = HTTPField.Name("Sec-Fetch-Site")!
}

/// `Strict-Transport-Security` on every answer of a TLS listener, errors too: a browser that
/// reached it once asks for HTTPS from then on.
struct StrictTransportMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.strictTransportSecurity] = "max-age=31536000"
        return response
    }
}
