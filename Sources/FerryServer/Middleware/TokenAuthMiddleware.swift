import FerryKit
import HTTPTypes
import Hummingbird

/// Requires `Authorization: Bearer <token>` on every API call (the daemon's token, or the paired
/// browser extension's), or the web app's session cookie (see ``WebLogin``).
///
/// A request from a browser extension's origin must carry the extension's token, and come from
/// the origin it paired from; the extension's token may only do what ``ExtensionAccess`` allows.
struct TokenAuthMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext
    let token: String
    let login: WebLogin
    let pairing: ExtensionPairing

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.credential = try credential(request)
        if let origin = context.extensionOrigin {
            guard context.credential == .browserExtension, pairing.accepts(origin: origin) else {
                throw FerryError(
                    .forbiddenOrigin,
                    "Requests from a browser extension ('\(origin)') need the token it was given when it paired (`ferry extension pair`)."
                )
            }
        }
        if context.credential == .browserExtension, !ExtensionAccess.allows(request.method, path: request.uri.path) {
            throw FerryError(.forbidden, ExtensionAccess.refusal)
        }
        return try await next(request, context)
    }

    private func credential(_ request: Request) throws -> Context.Credential {
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
            let given = String(header.dropFirst(7))
            if Self.constantTimeEqual(given, token) { return .token }
            if pairing.isValid(token: given) { return .browserExtension }
        }
        if let cookies = request.headers[.cookie], let session = WebLogin.session(fromCookieHeader: cookies),
            login.isValid(session: session)
        {
            return .webSession
        }
        throw FerryError(
            .unauthorized,
            "This API needs the token from the state folder as 'Authorization: Bearer <token>', a browser extension's own token (`ferry extension pair`), or a web session from the link `ferry open` prints."
        )
    }

    /// Compares without leaking, through timing, how much of a guess was right.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
