import FerryCore
import FerryFeeds
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
        router.get("index.php/login/v2/flow/:id") { request, context in
            let words = LoginFlowWords(acceptLanguage: request.headers[.acceptLanguage])
            let id = try context.parameters.require("id")
            guard let app = await flows.app(of: id) else { return Self.page(words.expired, words, status: .notFound) }
            return Self.page(Self.loginForm(app: app, error: nil, words), words)
        }
        router.post("index.php/login/v2/flow/:id") { request, context in
            let words = LoginFlowWords(acceptLanguage: request.headers[.acceptLanguage])
            let id = try context.parameters.require("id")
            guard let app = await flows.app(of: id) else { return Self.page(words.expired, words, status: .notFound) }
            let form = try await Self.form(request, context: context)
            let user = form["user"] ?? "", password = form["password"] ?? ""
            let address = context.remoteAddress ?? ""
            guard !user.isEmpty, await sync.authenticate(user, password: password) else {
                try? await Task.sleep(for: await flows.failed(from: address))
                return Self.page(Self.loginForm(app: app, error: words.wrong, words), words, status: .unauthorized)
            }
            await flows.succeeded(from: address)
            let appPassword = try await sync.accounts.makeToken(for: user, label: "\(app.prefix(60)) (Nextcloud sign-in)").token
            await flows.grant(id, server: try base(of: request), user: user, appPassword: appPassword)
            return Self.page(Self.granted(app: app, user: user, words), words)
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

    static func page(_ body: String, _ words: LoginFlowWords, status: HTTPResponse.Status = .ok) -> Response {
        let html = """
            <!doctype html><html lang="\(words.language)"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(words.title))</title><style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem}
            label,input,button{display:block;width:100%;box-sizing:border-box;margin:.4rem 0}input,button{padding:.6rem;font-size:1rem}
            .error{color:#b00020}</style></head><body>\(body)</body></html>
            """
        return Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8", .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"],
            body: .init(byteBuffer: ByteBuffer(string: html))
        )
    }

    static func loginForm(app: String, error: String?, _ words: LoginFlowWords) -> String {
        """
        <h1>\(escape(words.heading))</h1>
        <p>\(words.asks.replacingOccurrences(of: "{app}", with: "<strong>\(escape(app))</strong>"))</p>
        \(error.map { "<p class=\"error\" role=\"alert\">\(escape($0))</p>" } ?? "")
        <form method="post"><label for="user">\(escape(words.user))</label><input id="user" name="user" autocomplete="username" required>
        <label for="password">\(escape(words.password))</label><input id="password" name="password" type="password" autocomplete="current-password" required>
        <button type="submit">\(escape(words.allow))</button></form>
        """
    }

    static func granted(app: String, user: String, _ words: LoginFlowWords) -> String {
        "<h1>\(escape(words.signedIn))</h1><p>"
            + words.syncsAs.replacingOccurrences(of: "{app}", with: escape(app)).replacingOccurrences(of: "{user}", with: "<strong>\(escape(user))</strong>")
            + "</p>"
    }

    static func escape(_ text: String) -> String { HTMLSanitizer.escape(text, attribute: true) }

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

/// The sign-in page's words in the web app's four languages, chosen by the browser's
/// Accept-Language (English otherwise). `{app}` and `{user}` are filled in escaped.
struct LoginFlowWords {
    var language = "en"
    var title = "Ferry: sign in an app"
    var heading = "Sign in to Ferry"
    var asks = "{app} asks to sync your podcasts and places. Sign in only if you started this from that app."
    var user = "User name"
    var password = "Password"
    var allow = "Allow"
    var wrong = "Wrong user name or password."
    var signedIn = "Signed in"
    var syncsAs = "{app} now syncs as {user}. You can close this page and go back to the app."
    var expired = "<h1>This sign-in has ended</h1><p>Start it again from the app.</p>"

    init(acceptLanguage: String?) {
        let wanted = (acceptLanguage ?? "").lowercased().split(separator: ",").map { $0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces) }
        guard let first = wanted.first(where: { ["ru", "vi", "zh", "en"].contains(String($0.prefix(2))) }) else { return }
        switch first.prefix(2) {
        case "ru":
            (language, title, heading) = ("ru", "Ferry: вход для приложения", "Вход в Ferry")
            asks = "{app} просит синхронизировать ваши подкасты и места прослушивания. Входите, только если начали это в том приложении."
            (user, password, allow, wrong) = ("Имя пользователя", "Пароль", "Разрешить", "Неверное имя пользователя или пароль.")
            (signedIn, syncsAs) = ("Вход выполнен", "{app} теперь синхронизируется как {user}. Эту страницу можно закрыть и вернуться в приложение.")
            expired = "<h1>Этот вход больше не действует</h1><p>Начните заново в приложении.</p>"
        case "vi":
            (language, title, heading) = ("vi", "Ferry: đăng nhập cho ứng dụng", "Đăng nhập Ferry")
            asks = "{app} muốn đồng bộ podcast và vị trí nghe của bạn. Chỉ đăng nhập nếu bạn bắt đầu việc này từ ứng dụng đó."
            (user, password, allow, wrong) = ("Tên người dùng", "Mật khẩu", "Cho phép", "Sai tên người dùng hoặc mật khẩu.")
            (signedIn, syncsAs) = ("Đã đăng nhập", "{app} giờ đồng bộ với tư cách {user}. Bạn có thể đóng trang này và quay lại ứng dụng.")
            expired = "<h1>Lần đăng nhập này đã kết thúc</h1><p>Hãy bắt đầu lại từ ứng dụng.</p>"
        case "zh":
            (language, title, heading) = ("zh-Hans", "Ferry：为应用登录", "登录 Ferry")
            asks = "{app} 请求同步你的播客和收听位置。只有当你是从该应用发起时才登录。"
            (user, password, allow, wrong) = ("用户名", "密码", "允许", "用户名或密码错误。")
            (signedIn, syncsAs) = ("已登录", "{app} 现在以 {user} 的身份同步。你可以关闭此页面并返回应用。")
            expired = "<h1>此次登录已结束</h1><p>请在应用中重新开始。</p>"
        default:
            break
        }
    }
}
