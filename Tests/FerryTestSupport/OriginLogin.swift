import Crypto
import Foundation

/// What a protected path of the ``Origin`` asks for, and how it checks an answer: Basic, or
/// Digest (RFC 7616, `qop=auth`) with MD5 or SHA-256, computed here independently of Ferry's
/// own Digest code (curl's `--digest` checks this side: `OriginDigestTests`).
package struct OriginLogin: Sendable {
    package enum Scheme: Sendable, Hashable {
        case basic
        case digestMD5
        case digestSHA256
    }

    package var schemes: [Scheme]
    package var user: String
    package var password: String
    package var realm = "ferry-test"

    package init(_ schemes: [Scheme], user: String, password: String) {
        self.schemes = schemes
        self.user = user
        self.password = password
    }

    /// The `WWW-Authenticate` values of a 401, one per scheme.
    func challenges(nonce: String, stale: Bool) -> [String] {
        schemes.map { scheme in
            switch scheme {
            case .basic: return #"Basic realm="\#(realm)""#
            case .digestMD5, .digestSHA256:
                let algorithm = scheme == .digestMD5 ? "MD5" : "SHA-256"
                return #"Digest realm="\#(realm)", qop="auth", algorithm=\#(algorithm), nonce="\#(nonce)", opaque="0paque""#
                    + (stale ? ", stale=true" : "")
            }
        }
    }

    enum Verdict: Equatable {
        case accepted
        case refused
        /// Right password, but a nonce the origin no longer accepts.
        case stale
    }

    /// Checks an `Authorization` value against the request's target (path and query).
    func check(_ authorization: String?, method: String, target: String, nonceState: (String) -> Bool?) -> Verdict {
        guard let authorization else { return .refused }
        if schemes.contains(.basic), authorization == "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() { return .accepted }
        guard authorization.hasPrefix("Digest ") else { return .refused }
        let fields = Self.fields(String(authorization.dropFirst(7)))
        guard let algorithm = fields["algorithm"] ?? "MD5" as String?,
            (algorithm == "MD5" && schemes.contains(.digestMD5)) || (algorithm == "SHA-256" && schemes.contains(.digestSHA256)),
            fields["username"] == user, fields["realm"] == realm, fields["uri"] == target, fields["qop"] == "auth",
            fields["opaque"] == "0paque", let nonce = fields["nonce"], let nc = fields["nc"], let cnonce = fields["cnonce"]
        else { return .refused }
        let h: (String) -> String = { text in
            algorithm == "MD5"
                ? Insecure.MD5.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
                : SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
        }
        let expected = h("\(h("\(user):\(realm):\(password)")):\(nonce):\(nc):\(cnonce):auth:\(h("\(method):\(target)"))")
        guard fields["response"] == expected else { return .refused }
        switch nonceState(nonce) {
        case true?: return .accepted
        case false?: return .stale
        case nil: return .refused
        }
    }

    /// `name=value, name="quoted, value"` pairs (enough for the answers clients send).
    package static func fields(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(text)
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                while let character = rest.first, character != "\"" {
                    if character == "\\" { rest = rest.dropFirst() }
                    if let next = rest.first { value.append(next) }
                    rest = rest.dropFirst()
                }
                rest = rest.dropFirst()
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            result[name] = value
        }
        return result
    }
}
