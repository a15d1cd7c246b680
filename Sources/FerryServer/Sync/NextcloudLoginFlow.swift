import FerryCore
import FerryKit
import FerryListening
import Foundation
import HTTPTypes
import Hummingbird

/// Nextcloud's Login Flow v2, as AntennaPod signs in with it: the app starts a flow
/// (`POST /index.php/login/v2`), opens its `login` page in the browser, and polls its
/// `endpoint` with the `token` (404 until the user has logged in there, then once the server,
/// user name and an app password). The app password is an account token labelled with the app
/// that asked (revoked with the user's other tokens); the user's password never reaches the app.
/// Flows are kept in memory for 20 minutes, at most 200 at once.
actor NextcloudLoginFlows {
    struct Flow {
        var pollToken: String
        var app: String
        var started: Date
        var granted: (server: String, user: String, appPassword: String)?
    }

    static let lifetime: TimeInterval = 20 * 60
    static let most = 200
    private var flows: [String: Flow] = [:]
    private var throttle = LoginThrottle()

    /// A new flow for `app` (its User-Agent) → the login page's id and the poll token.
    func start(app: String, now: Date = Date()) throws -> (id: String, pollToken: String) {
        flows = flows.filter { now.timeIntervalSince($0.value.started) < Self.lifetime }
        guard flows.count < Self.most else { throw FerryError(.invalidState, "Too many sign-ins are under way; try again in a few minutes.") }
        let id = SecretFile.randomHex(byteCount: 32)
        let token = SecretFile.randomHex(byteCount: 32)
        flows[id] = Flow(pollToken: token, app: app, started: now)
        return (id, token)
    }

    /// The app that started flow `id`, while it waits for a login.
    func app(of id: String, now: Date = Date()) -> String? {
        guard let flow = flows[id], now.timeIntervalSince(flow.started) < Self.lifetime, flow.granted == nil else { return nil }
        return flow.app
    }

    func grant(_ id: String, server: String, user: String, appPassword: String) {
        flows[id]?.granted = (server, user, appPassword)
    }

    /// The grant for this poll token, once: the flow ends when the app has it.
    func poll(_ token: String, now: Date = Date()) -> (server: String, user: String, appPassword: String)? {
        guard let (id, flow) = flows.first(where: { $0.value.pollToken == token }), now.timeIntervalSince(flow.started) < Self.lifetime,
            let granted = flow.granted
        else { return nil }
        flows[id] = nil
        return granted
    }

    /// How long a failed login from `address` waits (as the sync API's own logins).
    func failed(from address: String) -> Duration { throttle.failed(from: address) }
    func succeeded(from address: String) { throttle.succeeded(from: address) }
}

/// The flow's paths: start, the browser's login page, and the poll.
struct NextcloudLoginRoutes {
    let sync: SyncLibrary
    let flows: NextcloudLoginFlows
    let scheme: String

    func register(on router: Router<FerryRequestContext>) {
        router.post("index.php/login/v2") { request, _ in
            let app = String((request.headers[.userAgent] ?? "A podcast app").prefix(100))
            let (id, token) = try await flows.start(app: app)
            let base = try base(of: request)
            return try jsonResponse(Started(poll: .init(token: token, endpoint: "\(base)/index.php/login/v2/poll"), login: "\(base)/index.php/login/v2/flow/\(id)"))
        }
        router.post("index.php/login/v2/poll") { request, context in
            let form = try await Self.form(request, context: context)
            guard let token = form["token"], let granted = await flows.poll(token) else {
                return Response(status: .notFound)
            }
            return try jsonResponse(Granted(server: granted.server, loginName: granted.user, appPassword: granted.appPassword))
        }
        router.get("index.php/login/v2/flow/:id") { _, context in
            let id = try context.parameters.require("id")
            guard let app = await flows.app(of: id) else { return Self.page(Self.expired, status: .notFound) }
            return Self.page(Self.loginForm(app: app, error: nil))
        }
        router.post("index.php/login/v2/flow/:id") { request, context in
            let id = try context.parameters.require("id")
            guard let app = await flows.app(of: id) else { return Self.page(Self.expired, status: .notFound) }
            let form = try await Self.form(request, context: context)
            let user = form["user"] ?? "", password = form["password"] ?? ""
            let address = context.remoteAddress ?? ""
            guard !user.isEmpty, await sync.authenticate(user, password: password) else {
                try? await Task.sleep(for: await flows.failed(from: address))
                return Self.page(Self.loginForm(app: app, error: "Wrong user name or password."), status: .unauthorized)
            }
            await flows.succeeded(from: address)
            let appPassword = try await sync.accounts.makeToken(for: user, label: "\(app.prefix(60)) (Nextcloud sign-in)").token
            await flows.grant(id, server: try base(of: request), user: user, appPassword: appPassword)
            return Self.page(Self.granted(app: app, user: user))
        }
    }

    /// `scheme://host[:port]` as the app reached this listener (its Host header).
    private func base(of request: Request) throws -> String {
        guard let host = request.head.authority, !host.isEmpty,
            host.allSatisfy({ $0.isLetter || $0.isNumber || ".-:[]_".contains($0) }), host.count <= 300
        else { throw FerryError.invalidRequest("The request names no host this server can answer as.") }
        return "\(scheme)://\(host)"
    }

    static func form(_ request: Request, context: FerryRequestContext) async throws -> [String: String] {
        let body = try await request.body.collect(upTo: 16 << 10)
        var components = URLComponents()
        components.percentEncodedQuery = String(decoding: body.readableBytesView, as: UTF8.self).replacingOccurrences(of: "+", with: "%20")
        var fields: [String: String] = [:]
        for item in components.queryItems ?? [] where fields[item.name] == nil { fields[item.name] = item.value ?? "" }
        return fields
    }

    static func page(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Ferry: sign in an app</title><style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem}
            label,input,button{display:block;width:100%;box-sizing:border-box;margin:.4rem 0}input,button{padding:.6rem;font-size:1rem}
            .error{color:#b00020}</style></head><body>\(body)</body></html>
            """
        return Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8", .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"],
            body: .init(byteBuffer: ByteBuffer(string: html))
        )
    }

    static func loginForm(app: String, error: String?) -> String {
        """
        <h1>Sign in to Ferry</h1>
        <p><strong>\(escape(app))</strong> asks to sync your podcasts and places. Sign in only if you started this from that app.</p>
        \(error.map { "<p class=\"error\" role=\"alert\">\(escape($0))</p>" } ?? "")
        <form method="post"><label for="user">User name</label><input id="user" name="user" autocomplete="username" required>
        <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
        <button type="submit">Allow</button></form>
        """
    }

    static func granted(app: String, user: String) -> String {
        "<h1>Signed in</h1><p>\(escape(app)) now syncs as <strong>\(escape(user))</strong>. You can close this page and go back to the app.</p>"
    }

    static let expired = "<h1>This sign-in has ended</h1><p>Start it again from the app.</p>"

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
    }

    private struct Started: Encodable {
        struct Poll: Encodable {
            var token: String
            var endpoint: String
        }
        var poll: Poll
        var login: String
    }

    private struct Granted: Encodable {
        var server: String
        var loginName: String
        var appPassword: String
    }
}
