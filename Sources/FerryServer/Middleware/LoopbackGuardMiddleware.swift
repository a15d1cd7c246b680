import FerryKit
import HTTPTypes
import Hummingbird

/// Refuses requests whose Host is not a loopback name (DNS rebinding: a web page on
/// evil.example resolving to 127.0.0.1), and state-changing requests from a foreign Origin.
///
/// A browser extension's origin (`chrome-extension://ID`) is let through to the API (`/v1/…`)
/// only, any method, and marked in the context: there only the paired extension's token answers
/// for it (``TokenAuthMiddleware``), or a pairing code (`POST /v1/extension/pair`). Chromium
/// sends an extension's Origin with POST, PUT, PATCH and DELETE (all the API's changes), not with
/// GET: an extension's reads look like any other client's and are judged by their credential.
struct LoopbackGuardMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let authority = request.head.authority, Self.isLoopback(authority: authority) else {
            throw FerryError(
                .forbiddenHost, "The Host header must name this machine (localhost, 127.0.0.1 or [::1]); got '\(request.head.authority ?? "")'."
            )
        }
        if let origin = request.headers[.origin], ExtensionAccess.isExtensionOrigin(origin) {
            guard request.uri.path.hasPrefix("/v1/") else {
                throw FerryError(.forbiddenOrigin, "A browser extension ('\(origin)') may only call the API (/v1/…), with its own token.")
            }
            var context = context
            context.extensionOrigin = origin
            return try await next(request, context)
        }
        if request.method != .get, request.method != .head, let origin = request.headers[.origin] {
            guard origin != "null", let host = Self.host(ofOrigin: origin), Self.isLoopback(authority: host) else {
                throw FerryError(.forbiddenOrigin, "Requests that change state are not accepted from the web origin '\(origin)'.")
            }
        }
        return try await next(request, context)
    }

    /// `localhost:7447`, `127.0.0.1`, `[::1]:80`, `app.localhost` → true.
    static func isLoopback(authority: String) -> Bool {
        var host = Substring(authority.lowercased())
        if host.hasPrefix("[") {
            guard let end = host.firstIndex(of: "]") else { return false }
            host = host[host.index(after: host.startIndex)..<end]
            return host == "::1"
        }
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// `http://localhost:7447` → `localhost:7447`.
    static func host(ofOrigin origin: String) -> String? {
        guard let schemeEnd = origin.range(of: "://") else { return nil }
        let rest = origin[schemeEnd.upperBound...]
        return String(rest.prefix(while: { $0 != "/" }))
    }
}
