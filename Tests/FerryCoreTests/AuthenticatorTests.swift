import FerryKit
import Foundation
@testable import FerryCore
import Testing

/// Who gets which credential, tested from the attacker's side: a credential goes only to the
/// origin it belongs to, and a stored one never over plain http unless allowed.
@Suite struct AuthenticatorTests {
    static let url = URL(string: "https://files.example.com/a/file.bin?x=1")!
    static let stored = [StoredCredential(host: "files.example.com", user: "kept", password: "stored-secret")]

    func lookup(_ options: TransferOptions = TransferOptions(), store: [StoredCredential] = []) -> CredentialLookup {
        lookup(Self.url, options, store: store)
    }

    func lookup(_ url: URL, _ options: TransferOptions = TransferOptions(), store: [StoredCredential] = []) -> CredentialLookup {
        CredentialLookup(url: url, options: options, store: { store })
    }

    @Test func userGoesToTheURLsOwnOriginOnly() async throws {
        let lookup = lookup(TransferOptions(user: "ann", password: "pw"))
        #expect(try await lookup.credential(for: Self.url)?.source == .option)
        #expect(try await lookup.credential(for: URL(string: "https://files.example.com/other")!)?.user == "ann")
        // Another host, another port, another scheme: none of them is the URL's origin.
        for other in ["https://evil.example.net/a", "https://files.example.com:8443/a", "http://files.example.com/a"] {
            #expect(try await lookup.credential(for: URL(string: other)!) == nil, "\(other)")
        }
    }

    @Test func userInfoInTheURL() async throws {
        let lookup = lookup(URL(string: "https://u%40x:p%3Aw@files.example.com/f")!)
        let found = try await lookup.credential(for: URL(string: "https://files.example.com/f")!)
        #expect(found?.source == .url)
        #expect(found?.user == "u@x" || found?.user == "u%40x")
        #expect(try await lookup.credential(for: URL(string: "https://cdn.example.com/f")!) == nil)
    }

    @Test func storeGoesToItsHostOverHTTPSOnly() async throws {
        let lookup = lookup(URL(string: "https://start.example.org/")!, store: Self.stored)
        #expect(try await lookup.credential(for: Self.url)?.password == "stored-secret")
        #expect(try await lookup.credential(for: URL(string: "https://evil.example.net/")!) == nil)
        await #expect {
            try await lookup.credential(for: URL(string: "http://files.example.com/a")!)
        } throws: { error in
            (error as? FerryError)?.code == .authenticationFailed && (error as? FerryError)?.message.contains("--auth-over-http") == true
        }
        let allowed = self.lookup(URL(string: "http://files.example.com/")!, TransferOptions(authOverHTTP: true), store: Self.stored)
        #expect(try await allowed.credential(for: URL(string: "http://files.example.com/a")!)?.user == "kept")
    }

    @Test func storeEntryForOnePort() async throws {
        let lookup = lookup(store: [StoredCredential(host: "files.example.com:8443", user: "p", password: "x")])
        #expect(try await lookup.credential(for: URL(string: "https://files.example.com:8443/")!)?.user == "p")
        #expect(try await lookup.credential(for: Self.url) == nil)
    }

    @Test func storeEntryForAnIPv6Address() async throws {
        let lookup = lookup(store: [StoredCredential(host: "[::1]:8443", user: "six", password: "x")])
        #expect(try await lookup.credential(for: URL(string: "https://[::1]:8443/f")!)?.user == "six")
        #expect(try await lookup.credential(for: URL(string: "https://[::1]/f")!) == nil)
    }

    @Test func userWithoutPasswordTakesItsOwnFromTheStore() async throws {
        #expect(try await lookup(TransferOptions(user: "kept"), store: Self.stored).credential(for: Self.url)?.password == "stored-secret")
        #expect(try await lookup(TransferOptions(user: "someone"), store: Self.stored).credential(for: Self.url) == nil)
    }

    @Test func strongestChallengeWins() throws {
        let credential = HTTPCredential(user: "u", password: "p", source: .option)
        let all = try AuthChallenge.parse([
            #"Basic realm="r""#, #"Digest realm="r", nonce="n", algorithm=MD5, qop="auth""#,
            #"Digest realm="r", nonce="n", algorithm=SHA-256, qop="auth", Bearer"#,
        ])
        func pick(_ challenges: [AuthChallenge]) throws -> String {
            switch try Authenticator.strongest(challenges, credential: credential, host: "h", cnonce: { "c" }) {
            case .basic: "basic"
            case .digest(let digest): digest.algorithm.rawValue
            }
        }
        #expect(try pick(all) == "SHA-256")
        #expect(try pick(Array(all.prefix(2))) == "MD5")
        #expect(try pick([all[0]]) == "basic")
        // An unknown algorithm is passed over while another challenge can be answered.
        let unknown = try AuthChallenge.parse([#"Digest realm="r", nonce="n", algorithm=SHA-512-256, Basic realm="r""#])
        #expect(try pick(unknown) == "basic")
        #expect(throws: FerryError.self) { try pick(Array(unknown.prefix(1))) }
        #expect(throws: FerryError.self) { try pick(try AuthChallenge.parse(["Bearer realm=x"])) }
    }

    @Test func answersThenSendsAtOnceThenRefusesAWrongPassword() async throws {
        let auth = Authenticator(lookup: lookup(TransferOptions(user: "ann", password: "pw")), cnonce: { "c" })
        #expect(auth.preemptive(for: Self.url) == nil)
        let challenge = #"Digest realm="r", nonce="n1", algorithm=SHA-256, qop="auth""#
        let first = try #require(try await auth.answer(challenges: [challenge], url: Self.url, round: 0))
        #expect(first.contains("nc=00000001"))
        #expect(first.contains(#"uri="/a/file.bin?x=1""#))
        let next = try #require(auth.preemptive(for: URL(string: "https://files.example.com/b")!))
        #expect(next.contains("nc=00000002") && next.contains(#"uri="/b""#))
        #expect(auth.preemptive(for: URL(string: "https://other.example.com/b")!) == nil)
        // A stale nonce is answered again, without asking anyone.
        let stale = #"Digest realm="r", nonce="n2", algorithm=SHA-256, qop="auth", stale=true"#
        let again = try #require(try await auth.answer(challenges: [stale], url: Self.url, round: 1))
        #expect(again.contains(#"nonce="n2""#) && again.contains("nc=00000001"))
        // A second refusal of a fresh answer is the password's.
        await #expect {
            try await auth.answer(challenges: [challenge], url: Self.url, round: 1)
        } throws: { error in
            (error as? FerryError)?.message == "The server refused the user ann's password for files.example.com (from --user). Check the user name and password."
        }
    }

    @Test func noCredentialLeavesThe401() async throws {
        let auth = Authenticator(lookup: lookup())
        #expect(try await auth.answer(challenges: ["garbage ="], url: Self.url, round: 0) == nil)
    }

    @Test func redactedOptionsHideThePassword() throws {
        let options = TransferOptions(user: "ann", password: "pw", netrcFile: "/home/ann/.netrc")
        #expect(options.redacted.password == "<redacted>")
        #expect(options.redacted.user == "ann")
        let json = String(decoding: try FerryJSON.encoder().encode(options.redacted), as: UTF8.self)
        #expect(!json.contains("pw\""))
        #expect(throws: FerryError.self) { try TransferOptions(password: "x").validate() }
        #expect(throws: FerryError.self) { try TransferOptions(netrcFile: "relative/.netrc").validate() }
    }
}
