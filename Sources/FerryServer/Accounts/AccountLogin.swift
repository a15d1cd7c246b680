import FerryKit
import FerryListening
import Foundation
import Logging

/// The web app's password login: a user's name and password give a session cookie
/// (`ferry_user`: HttpOnly, SameSite=Strict, Secure over HTTPS, for
/// ``AccountLibrary/sessionLifetime``). Each failed login from an address waits longer before
/// its answer (``LoginThrottle``, as the sync API's); an unknown name fails as slowly as a wrong
/// password. Each login and each failure is logged with the client's address (behind a trusted
/// proxy, the one it forwarded), so fail2ban and the like can act on them.
actor AccountLogin {
    static let cookieName = "ferry_user"
    let accounts: AccountLibrary
    let logger: Logger
    private var throttle = LoginThrottle()

    init(accounts: AccountLibrary, logger: Logger) {
        self.accounts = accounts
        self.logger = logger
    }

    /// - Returns: the new session's cookie value.
    /// - Throws: `unauthorized` after the throttle's wait.
    func logIn(_ login: LoginRequest, userAgent: String?, address: String?) async throws -> String {
        guard login.name.utf8.count <= 64, login.password.utf8.count <= 1024, await accounts.verify(login.name, password: login.password) != nil else {
            let delay = throttle.failed(from: address ?? "")
            logger.warning("login failed", metadata: ["login.user": "\(login.name.prefix(64))", "login.address": "\(address ?? "")"])
            try? await Task.sleep(for: delay)
            throw FerryError(.unauthorized, "Wrong user name or password.")
        }
        throttle.succeeded(from: address ?? "")
        logger.notice("signed in", metadata: ["login.user": "\(login.name)", "login.address": "\(address ?? "")"])
        return try await accounts.startSession(for: login.name, userAgent: userAgent, address: address)
    }

    /// The `Set-Cookie` value for a new session (`secure`: the request came over HTTPS).
    static func cookie(_ secret: String, secure: Bool) -> String {
        "\(cookieName)=\(secret); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(Int(AccountLibrary.sessionLifetime))" + (secure ? "; Secure" : "")
    }

    static func clearedCookie(secure: Bool) -> String {
        "\(cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0" + (secure ? "; Secure" : "")
    }
}
