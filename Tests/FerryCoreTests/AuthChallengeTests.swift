import FerryKit
import Foundation
@testable import FerryCore
import Testing

@Suite struct AuthChallengeTests {
    func parse(_ headers: String...) throws -> [AuthChallenge] { try AuthChallenge.parse(headers) }

    @Test func basic() throws {
        let challenges = try parse(#"Basic realm="simple""#)
        #expect(challenges == [AuthChallenge(scheme: "basic", parameters: ["realm": "simple"])])
    }

    /// RFC 7235 section 4.1's example: two challenges in one header, a comma and an escaped
    /// quote inside a quoted string.
    @Test func severalChallengesInOneHeader() throws {
        let challenges = try parse(#"Newauth realm="apps", type=1, title="Login to \"apps\", please", Basic realm="simple""#)
        #expect(challenges.count == 2)
        #expect(challenges[0].scheme == "newauth")
        #expect(challenges[0].parameters == ["realm": "apps", "type": "1", "title": #"Login to "apps", please"#])
        #expect(challenges[1] == AuthChallenge(scheme: "basic", parameters: ["realm": "simple"]))
    }

    @Test func digestWithQopListAndSeveralHeaders() throws {
        let challenges = try parse(
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
            #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf", opaque="FQhe""#
        )
        #expect(challenges.map(\.scheme) == ["digest", "digest"])
        #expect(challenges[0]["qop"] == "auth, auth-int")
        #expect(challenges[0]["ALGORITHM"] == "SHA-256")
        #expect(challenges[1]["algorithm"] == "MD5")
    }

    @Test func token68AndBareSchemes() throws {
        let challenges = try parse("Negotiate abc+/d==, Bearer, Basic realm=x , ,")
        #expect(challenges == [
            AuthChallenge(scheme: "negotiate", token68: "abc+/d=="), AuthChallenge(scheme: "bearer"),
            AuthChallenge(scheme: "basic", parameters: ["realm": "x"]),
        ])
    }

    @Test func spacesAroundEquals() throws {
        let challenges = try parse(#"Digest realm = "r" , nonce= n1,qop="auth""#)
        #expect(challenges.first?.parameters == ["realm": "r", "nonce": "n1", "qop": "auth"])
    }

    @Test(arguments: [
        (#"Basic realm="unterminated"#, "not closed"),
        ("Digest realm=, nonce=\"x\"", "where a parameter name should start"),
        ("Digest realm=\"a\", nonce=", "the parameter nonce has no value"),
        (#"Digest realm="a" nonce="b""#, "after the parameter realm"),
        (#"Digest realm="a", realm="b""#, "twice"),
        (#"="x""#, "authentication scheme"),
        (#"Digest realm="a", =b"#, "parameter name"),
    ])
    func malformed(_ header: String, _ reason: String) {
        #expect {
            try AuthChallenge.parse([header])
        } throws: { error in
            guard let error = error as? FerryError else { return false }
            return error.code == .authenticationFailed && error.message.contains("malformed") && error.message.contains(reason)
        }
    }
}
