import HTTPTypes
import Hummingbird

/// Headers that keep the web app to itself: scripts, styles and media only from this origin
/// (artwork may come from the catalog's image hosts), no framing, no MIME sniffing (a
/// downloaded `.html` file is never run as a page), no referrer.
struct SecurityHeadersMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext

    static let contentSecurityPolicy = [
        "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' http: https: data:",
        "media-src 'self'", "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'",
        "form-action 'self'",
    ].joined(separator: "; ")

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.init("X-Frame-Options")!] = "DENY"
        response.headers[.init("Referrer-Policy")!] = "no-referrer"
        return response
    }
}
