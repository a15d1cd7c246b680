import Crypto
import FerryKit
import Foundation
import Synchronization

/// The web app's login: `ferry open` asks for a one-time link (`/login?code=...`, valid five
/// minutes, usable once); following it sets a session cookie (HttpOnly, SameSite=Strict) that
/// the API accepts instead of the Bearer token. `ferry open --user NAME` asks for a link that
/// signs that account in instead (an account session, its places and role).
///
/// The cookie is stateless: an expiry and an HMAC of it keyed by the daemon's token, so it
/// survives daemon restarts (the page reconnects without logging in again) and dies with the
/// token.
final class WebLogin: Sendable {
    static let cookieName = "ferry_session"
    static let linkLifetime: TimeInterval = 5 * 60
    static let sessionLifetime: TimeInterval = 30 * 24 * 3600

    private let key: SymmetricKey
    private let codes = Mutex<[String: (expiry: Date, user: String?)]>([:])

    /// Who a redeemed link signs in.
    enum Redeemed: Equatable {
        /// The machine's owner: an admin with the owner's places.
        case machine
        case account(String)
    }

    init(token: String) {
        key = SymmetricKey(data: SHA256.hash(data: Data("ferry-web-session|\(token)".utf8)))
    }

    /// A fresh single-use login code, for the machine's owner or for an account.
    func makeCode(for user: String? = nil, now: Date = Date()) -> String {
        let code = SecretFile.randomHex(byteCount: 24)
        codes.withLock { codes in
            codes = codes.filter { $0.value.expiry > now }
            codes[code] = (now.addingTimeInterval(Self.linkLifetime), user)
        }
        return code
    }

    /// Uses up a login code. - Returns: nil if unknown, used or expired.
    func redeem(_ code: String, now: Date = Date()) -> Redeemed? {
        codes.withLock { codes in
            guard let (expiry, user) = codes.removeValue(forKey: code), expiry > now else { return nil }
            return user.map(Redeemed.account) ?? .machine
        }
    }

    /// `v1.<expiry>.<hmac>`
    func makeSession(now: Date = Date()) -> String {
        let expiry = Int64(now.addingTimeInterval(Self.sessionLifetime).timeIntervalSince1970)
        return "v1.\(expiry).\(signature(expiry))"
    }

    func isValid(session value: String, now: Date = Date()) -> Bool {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1", let expiry = Int64(parts[1]), Double(expiry) > now.timeIntervalSince1970 else {
            return false
        }
        guard let given = Data(hex: String(parts[2])) else { return false }
        // A constant-time comparison.
        return HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: Data("\(expiry)".utf8), using: key)
    }

    private func signature(_ expiry: Int64) -> String {
        HMAC<SHA256>.authenticationCode(for: Data("\(expiry)".utf8), using: key).hexText
    }

    /// The `Set-Cookie` value for a new session.
    func cookie(now: Date = Date()) -> String {
        "\(Self.cookieName)=\(makeSession(now: now)); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(Int(Self.sessionLifetime))"
    }

    /// Reads the session cookie from a `Cookie` header.
    static func session(fromCookieHeader header: String) -> String? {
        cookie(cookieName, in: header)
    }

    /// The value of the cookie `name` in a `Cookie` header (the web app's, the sync listener's).
    static func cookie(_ name: String, in header: String?) -> String? {
        header?.split(separator: ";").lazy.map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
    }
}

extension Data {
    /// Bytes from lower- or upper-case hex; nil for anything else.
    init?(hex: String) {
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}
