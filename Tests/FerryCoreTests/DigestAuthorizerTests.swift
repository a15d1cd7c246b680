import FerryKit
import Foundation
@testable import FerryCore
import Testing

/// The Digest answers checked against RFC 7616 section 3.9.1's worked examples.
@Suite struct DigestAuthorizerTests {
    static let nonce = "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v"
    static let opaque = "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
    static let cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"

    static func challenge(_ algorithm: String?, qop: String? = "auth, auth-int", extra: [String: String] = [:]) -> AuthChallenge {
        var parameters = ["realm": "http-auth@example.org", "nonce": nonce, "opaque": opaque].merging(extra) { $1 }
        if let qop { parameters["qop"] = qop }
        if let algorithm { parameters["algorithm"] = algorithm }
        return AuthChallenge(scheme: "Digest", parameters: parameters)
    }

    static func fields(_ value: String) throws -> [String: String] {
        #expect(value.hasPrefix("Digest "))
        return try #require(AuthChallenge.parse([value]).first).parameters
    }

    @Test(arguments: [
        ("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
        ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
    ])
    func rfc7616Example(_ algorithm: String, _ response: String) throws {
        var digest = try DigestAuthorizer(Self.challenge(algorithm), user: "Mufasa", password: "Circle of Life", cnonce: { Self.cnonce })
        let fields = try Self.fields(digest.authorization(method: "GET", uri: "/dir/index.html"))
        #expect(fields["response"] == response)
        #expect(fields["username"] == "Mufasa")
        #expect(fields["realm"] == "http-auth@example.org")
        #expect(fields["uri"] == "/dir/index.html")
        #expect(fields["algorithm"] == algorithm)
        #expect(fields["nonce"] == Self.nonce)
        #expect(fields["nc"] == "00000001")
        #expect(fields["cnonce"] == Self.cnonce)
        #expect(fields["qop"] == "auth")
        #expect(fields["opaque"] == Self.opaque)
    }

    @Test func nonceCountGoesUp() throws {
        var digest = try DigestAuthorizer(Self.challenge("MD5"), user: "Mufasa", password: "Circle of Life", cnonce: { Self.cnonce })
        let first = try Self.fields(digest.authorization(method: "GET", uri: "/dir/index.html"))
        let second = try Self.fields(digest.authorization(method: "GET", uri: "/dir/index.html"))
        #expect(first["nc"] == "00000001")
        #expect(second["nc"] == "00000002")
        #expect(first["response"] != second["response"])
        #expect(digest.count == 2)
    }

    /// No algorithm means MD5; no qop is RFC 2069's answer (no nc, no cnonce).
    @Test func rfc2069Server() throws {
        var digest = try DigestAuthorizer(Self.challenge(nil, qop: nil), user: "Mufasa", password: "Circle of Life", cnonce: { Self.cnonce })
        let fields = try Self.fields(digest.authorization(method: "GET", uri: "/dir/index.html"))
        #expect(fields["algorithm"] == "MD5")
        #expect(fields["nc"] == nil && fields["cnonce"] == nil && fields["qop"] == nil)
        let ha1 = DigestAuthorizer.Algorithm.md5.hash("Mufasa:http-auth@example.org:Circle of Life")
        let ha2 = DigestAuthorizer.Algorithm.md5.hash("GET:/dir/index.html")
        #expect(fields["response"] == DigestAuthorizer.Algorithm.md5.hash("\(ha1):\(Self.nonce):\(ha2)"))
    }

    /// `-sess`: HA1 is H(H(user:realm:password):nonce:cnonce), kept for the session.
    @Test func sessionVariant() throws {
        var digest = try DigestAuthorizer(Self.challenge("SHA-256-sess"), user: "Mufasa", password: "Circle of Life", cnonce: { Self.cnonce })
        let fields = try Self.fields(digest.authorization(method: "GET", uri: "/a"))
        let sha = DigestAuthorizer.Algorithm.sha256
        let ha1 = sha.hash("\(sha.hash("Mufasa:http-auth@example.org:Circle of Life")):\(Self.nonce):\(Self.cnonce)")
        let expected = sha.hash("\(ha1):\(Self.nonce):00000001:\(Self.cnonce):auth:\(sha.hash("GET:/a"))")
        #expect(fields["response"] == expected)
        #expect(fields["algorithm"] == "SHA-256-sess")
    }

    @Test func userhash() throws {
        var digest = try DigestAuthorizer(
            Self.challenge("SHA-256", extra: ["userhash": "true"]), user: "Mufasa", password: "Circle of Life", cnonce: { Self.cnonce }
        )
        let fields = try Self.fields(digest.authorization(method: "GET", uri: "/a"))
        #expect(fields["username"] == DigestAuthorizer.Algorithm.sha256.hash("Mufasa:http-auth@example.org"))
        #expect(fields["userhash"] == "true")
    }

    @Test(arguments: [
        (Self.challenge("SHA-512-256"), "SHA-512-256"),
        (Self.challenge("MD5", qop: "auth-int"), "qop=auth-int"),
        (AuthChallenge(scheme: "digest", parameters: ["nonce": "n"]), "no realm"),
        (AuthChallenge(scheme: "digest", parameters: ["realm": "r"]), "no nonce"),
    ])
    func unanswerable(_ challenge: AuthChallenge, _ text: String) {
        #expect {
            try DigestAuthorizer(challenge, user: "u", password: "p")
        } throws: { error in
            (error as? FerryError)?.code == .authenticationFailed && (error as? FerryError)?.message.contains(text) == true
        }
    }
}
