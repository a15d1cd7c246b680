import Crypto
import FerryCore
import FerryKit
import FerryListening
import Foundation
import HTTPTypes
import Hummingbird

/// Who a sync request is from: HTTP Basic on any request, or the `sessionid` cookie that
/// `login.json` gave (kept in memory: after a restart a client logs in again, as gpodder.net
/// clients do on a 401). A failed login waits before its 401 (``LoginThrottle``). Credentials
/// that passed are remembered (as a SHA-256, for five minutes) so that a phone sending them
/// with every request does not cost a scrypt each time.
actor SyncAuthenticator {
    let sync: SyncLibrary
    private var throttle = LoginThrottle()
    private var sessions: [String: (user: String, expires: Date)] = [:]
    private var verified: [String: Date] = [:]
    static let verifiedLifetime: TimeInterval = 300
    static let sessionLifetime: TimeInterval = 14 * 24 * 3600
    static let cookieName = "sessionid"

    init(sync: SyncLibrary) { self.sync = sync }

    /// The user the request is from, which must be `named` (the user in the path).
    /// - Throws: `unauthorized` (401, with a challenge) for missing or wrong credentials;
    ///   `forbidden` when they are another user's.
    func user(_ request: Request, context: FerryRequestContext, named: String) async throws -> String {
        let user = try await authenticate(request, context: context)
        guard user == named else { throw FerryError(.forbidden, "These credentials are not \(named)'s.") }
        return user
    }

    /// Checks HTTP Basic credentials first (a login), else the session cookie.
    func authenticate(_ request: Request, context: FerryRequestContext) async throws -> String {
        if let (name, password) = Self.basic(request.headers[.authorization]) {
            let digest = Self.digest(name, password)
            if let until = verified[digest], until > Date() { return name }
            if await sync.authenticate(name, password: password) {
                throttle.succeeded(from: context.remoteAddress ?? "")
                if verified.count > 1000 { verified = verified.filter { $0.value > Date() } }
                verified[digest] = Date().addingTimeInterval(Self.verifiedLifetime)
                return name
            }
            let delay = throttle.failed(from: context.remoteAddress ?? "")
            try? await Task.sleep(for: delay)
            throw FerryError(.unauthorized, "Wrong user name or password.")
        }
        if let id = Self.cookie(request.headers[.cookie]), let session = sessions[id], session.expires > Date() {
            return session.user
        }
        throw FerryError(.unauthorized, "Log in with your Ferry sync user (HTTP Basic).")
    }

    /// A new session when the request's HTTP Basic credentials passed just now and it has no
    /// session yet; nil otherwise.
    func sessionForVerifiedCredentials(_ request: Request) -> String? {
        guard let (name, password) = Self.basic(request.headers[.authorization]), let until = verified[Self.digest(name, password)], until > Date()
        else { return nil }
        if let id = Self.cookie(request.headers[.cookie]), sessions[id]?.user == name { return nil }
        return startSession(for: name)
    }

    static func setCookie(_ session: String) -> String {
        "\(cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(Int(sessionLifetime))"
    }

    static func digest(_ name: String, _ password: String) -> String {
        SHA256.hash(data: Data("\(name)\u{0}\(password)".utf8)).hexText
    }

    /// A new session for the user: the value of the cookie to set.
    func startSession(for user: String) -> String {
        let now = Date()
        sessions = sessions.filter { $0.value.expires > now }
        let id = SecretFile.randomHex(byteCount: 32)
        sessions[id] = (user, now.addingTimeInterval(Self.sessionLifetime))
        return id
    }

    /// Forgets every session and remembered password: a user was removed or got a new password.
    func forgetAll() {
        sessions = [:]
        verified = [:]
    }

    func endSession(_ request: Request) {
        if let id = Self.cookie(request.headers[.cookie]) { sessions[id] = nil }
    }

    static func basic(_ header: String?) -> (String, String)? {
        guard let header, header.count < 4096, header.lowercased().hasPrefix("basic "),
            let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    static func cookie(_ header: String?) -> String? {
        WebLogin.cookie(cookieName, in: header)
    }
}

/// Every 401 of the sync listener carries the challenge that makes clients such as
/// mygpoclient (urllib) send their credentials; an answer to HTTP Basic credentials that
/// passed sets a session cookie, as gpodder.net does (mygpoclient sends its password three
/// times in its life, then counts on the cookie).
struct SyncSessionMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext
    let auth: SyncAuthenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as FerryError where error.code == .unauthorized {
            // Answered here (inside the router's ErrorMiddleware) so that it carries the challenge.
            response = ErrorMiddleware.response(error)
        }
        if response.status == .unauthorized {
            response.headers[.wwwAuthenticate] = #"Basic realm="Ferry sync""#
        } else if response.headers[.setCookie] == nil, let session = await auth.sessionForVerifiedCredentials(request) {
            response.headers[.setCookie] = SyncAuthenticator.setCookie(session)
        }
        return response
    }
}
