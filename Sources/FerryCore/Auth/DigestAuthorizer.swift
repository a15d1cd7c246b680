import Crypto
import FerryModel
import Foundation

/// Answers one Digest challenge (RFC 7616: MD5 and SHA-256, their `-sess` variants, `qop=auth`,
/// `userhash`), request after request: each answer counts `nc` up from 1 under the same nonce,
/// so later requests send it preemptively instead of paying a 401 each. Pure: the client nonce
/// comes from an injected function, so tests reproduce the RFC's worked examples.
package struct DigestAuthorizer: Sendable {
    package enum Algorithm: String, Sendable, CaseIterable {
        case md5 = "MD5"
        case md5Session = "MD5-sess"
        case sha256 = "SHA-256"
        case sha256Session = "SHA-256-sess"

        /// Higher is stronger: how a server's several challenges are ranked.
        package var strength: Int { self == .sha256 || self == .sha256Session ? 2 : 1 }
        var isSession: Bool { self == .md5Session || self == .sha256Session }

        func hash(_ text: String) -> String {
            let data = Data(text.utf8)
            switch self {
            case .md5, .md5Session: return Insecure.MD5.hash(data: data).map { String(format: "%02x", $0) }.joined()
            case .sha256, .sha256Session: return SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            }
        }
    }

    package let user: String
    let password: String
    package let realm: String
    package let nonce: String
    let opaque: String?
    package let algorithm: Algorithm
    /// `auth`, or nil for a server of RFC 2069 that names no qop.
    let qop: String?
    let userhash: Bool
    let makeCnonce: @Sendable () -> String
    /// The last nonce count sent.
    package private(set) var count: UInt32 = 0
    /// The `-sess` variants' session key, fixed by the first answer's cnonce.
    private var sessionKey: String?

    /// - Parameters:
    ///   - challenge: a `Digest` challenge.
    ///   - cnonce: makes each answer's client nonce (random unless a test gives one).
    /// - Throws: ``FerryError`` `authentication_failed` when the challenge has no realm or
    ///   nonce, names an algorithm Ferry does not know, or offers only `qop=auth-int`.
    package init(
        _ challenge: AuthChallenge, user: String, password: String, cnonce: @escaping @Sendable () -> String = DigestAuthorizer.randomCnonce
    ) throws(FerryError) {
        guard let realm = challenge["realm"], let nonce = challenge["nonce"] else {
            throw FerryError(.authenticationFailed, "The server's Digest challenge has no \(challenge["realm"] == nil ? "realm" : "nonce").")
        }
        let named = challenge["algorithm"] ?? "MD5"
        guard let algorithm = Algorithm.allCases.first(where: { $0.rawValue.lowercased() == named.lowercased() }) else {
            throw FerryError(
                .authenticationFailed,
                "The server asks for Digest with the algorithm \(named.prefix(40)); Ferry answers MD5, MD5-sess, SHA-256 and SHA-256-sess."
            )
        }
        var qop: String?
        if let offered = challenge["qop"] {
            let options = offered.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard options.contains("auth") else {
                throw FerryError(.authenticationFailed, "The server asks for Digest with qop=\(offered.prefix(40)); Ferry answers qop=auth only.")
            }
            qop = "auth"
        }
        guard !user.contains("\""), !(user + password).contains(where: \.isNewline) else {
            throw FerryError(.authenticationFailed, "A Digest user name cannot contain a double quote or a line break.")
        }
        self.user = user
        self.password = password
        self.realm = realm
        self.nonce = nonce
        self.opaque = challenge["opaque"]
        self.algorithm = algorithm
        self.qop = qop
        self.userhash = challenge["userhash"]?.lowercased() == "true"
        self.makeCnonce = cnonce
    }

    /// The `Authorization` value for one request, counting `nc` up.
    /// - Parameters:
    ///   - method: the request's method, `GET`.
    ///   - uri: the request target: path and query, as sent on the request line.
    package mutating func authorization(method: String, uri: String) -> String {
        count += 1
        let nc = String(format: "%08x", count)
        let cnonce = makeCnonce()
        let h = algorithm.hash
        var ha1 = sessionKey ?? h("\(user):\(realm):\(password)")
        if algorithm.isSession, sessionKey == nil {
            ha1 = h("\(ha1):\(nonce):\(cnonce)")
            sessionKey = ha1
        }
        let ha2 = h("\(method):\(uri)")
        let response = qop.map { h("\(ha1):\(nonce):\(nc):\(cnonce):\($0):\(ha2)") } ?? h("\(ha1):\(nonce):\(ha2)")
        var fields = [
            "username=\"\(userhash ? h("\(user):\(realm)") : user)\"", "realm=\(Self.quote(realm))", "uri=\(Self.quote(uri))",
            "algorithm=\(algorithm.rawValue)", "nonce=\(Self.quote(nonce))",
        ]
        if let qop { fields += ["nc=\(nc)", "cnonce=\(Self.quote(cnonce))", "qop=\(qop)"] }
        fields.append("response=\"\(response)\"")
        if let opaque { fields.append("opaque=\(Self.quote(opaque))") }
        if userhash { fields.append("userhash=true") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// A quoted string, with `"` and `\` escaped.
    static func quote(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// 16 random bytes in hex.
    package static let randomCnonce: @Sendable () -> String = {
        (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}
