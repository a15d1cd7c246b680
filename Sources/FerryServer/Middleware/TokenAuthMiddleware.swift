import FerryKit
import HTTPTypes
import Hummingbird

/// Requires `Authorization: Bearer <token>` on every API call, or the web app's session cookie
/// (see ``WebLogin``).
struct TokenAuthMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext
    let token: String
    let login: WebLogin

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            Self.constantTimeEqual(String(header.dropFirst(7)), token)
        {
            var context = context
            context.credential = .token
            return try await next(request, context)
        }
        if let cookies = request.headers[.cookie], let session = WebLogin.session(fromCookieHeader: cookies),
            login.isValid(session: session)
        {
            var context = context
            context.credential = .webSession
            return try await next(request, context)
        }
        throw FerryError(
            .unauthorized,
            "This API needs the token from the state folder as 'Authorization: Bearer <token>', or a web session from the link `ferry open` prints."
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
