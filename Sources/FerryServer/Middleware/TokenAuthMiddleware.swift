import FerryKit
import FerryListening
import HTTPTypes
import Hummingbird

/// Requires a credential on every API call: `Authorization: Bearer <token>` (the daemon's token,
/// the paired browser extension's, or a user's), or a session cookie (this machine's login link,
/// ``WebLogin``, or a user's password login, ``AccountLogin``). Beyond loopback only a user's
/// count. A member's request must be one ``MemberAccess`` allows.
///
/// A request from a browser extension's origin must carry the extension's token, and come from
/// the origin it paired from; the extension's token may only do what ``ExtensionAccess`` allows.
struct TokenAuthMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext
    let token: String
    let login: WebLogin
    let pairing: ExtensionPairing
    let accounts: AccountLibrary

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.credential = try await credential(request, context)
        if let origin = context.extensionOrigin {
            guard context.credential == .browserExtension, pairing.accepts(origin: origin) else {
                throw FerryError(
                    .forbiddenOrigin,
                    "Requests from a browser extension ('\(origin)') need the token it was given when it paired (`ferry extension pair`)."
                )
            }
        }
        switch context.credential {
        case .browserExtension where !ExtensionAccess.allows(request.method, path: request.uri.path):
            throw FerryError(.forbidden, ExtensionAccess.refusal)
        case .account(let identity) where identity.role == .member
            && !MemberAccess.allows(request.method, path: request.uri.path, user: identity.user):
            throw FerryError(.forbidden, MemberAccess.refusal)
        default:
            return try await next(request, context)
        }
    }

    private func credential(_ request: Request, _ context: Context) async throws -> Context.Credential {
        let local = context.remote == nil
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
            let given = String(header.dropFirst(7))
            if Self.constantTimeEqual(given, token) {
                guard local else {
                    throw FerryError(.forbidden, "The daemon's token works on this machine only; from elsewhere use a user's token (`ferry user token NAME`).")
                }
                return .token
            }
            if local, pairing.isValid(token: given) { return .browserExtension }
            if let identity = try await accounts.identity(secret: given, address: context.remoteAddress), identity.kind == .token {
                return .account(identity)
            }
        }
        let cookies = request.headers[.cookie]
        if let secret = WebLogin.cookie(AccountLogin.cookieName, in: cookies),
            let identity = try await accounts.identity(secret: secret, address: context.remoteAddress), identity.kind == .session
        {
            return .account(identity)
        }
        if local, let session = WebLogin.session(fromCookieHeader: cookies ?? ""), login.isValid(session: session) {
            return .webSession
        }
        throw FerryError(
            .unauthorized,
            local
                ? "This API needs the token from the state folder as 'Authorization: Bearer <token>', a browser extension's own token (`ferry extension pair`), a user's token or login, or a web session from the link `ferry open` prints."
                : "Log in with your Ferry user and password, or send a user's token (`ferry user token NAME`) as 'Authorization: Bearer <token>'."
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
