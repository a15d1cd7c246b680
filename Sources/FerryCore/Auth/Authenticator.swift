import FerryModel
import Foundation
import Synchronization

/// Answers a transfer's 401s: picks the strongest challenge Ferry speaks (Digest SHA-256, then
/// Digest MD5, then Basic), answers it with the credential ``CredentialLookup`` finds for that
/// origin, and remembers the answer per origin, so the transfer's later requests (its segments,
/// a resume, a retry) send `Authorization` at once (Digest with the same nonce and the next
/// `nc`) instead of paying a 401 each. A server that refuses an answer to its own fresh
/// challenge refused the password: that ends the attempt (no retry loop), unless it says the
/// nonce was only `stale`.
package final class Authenticator: Sendable {
    enum Scheme: Sendable {
        case basic(String)
        case digest(DigestAuthorizer)
    }

    struct Answer: Sendable {
        var credential: HTTPCredential
        var scheme: Scheme
    }

    let lookup: CredentialLookup
    let fingerprint: String
    private let answers = Mutex<[String: Answer]>([:])
    let cnonce: @Sendable () -> String

    package init(lookup: CredentialLookup, cnonce: @escaping @Sendable () -> String = DigestAuthorizer.randomCnonce) {
        self.lookup = lookup
        self.fingerprint = lookup.fingerprint
        self.cnonce = cnonce
    }

    /// The `Authorization` to send to `url` before it asks, when its origin asked before.
    /// - Parameter method: the request's method (Digest signs it).
    package func preemptive(for url: URL, method: String = "GET") -> String? {
        answers.withLock { answers in
            guard var answer = answers[HTTPFetcher.origin(of: url)] else { return nil }
            defer { answers[HTTPFetcher.origin(of: url)] = answer }
            return Self.value(&answer.scheme, url: url, method: method)
        }
    }

    /// Answers a 401 from `url`.
    /// - Parameters:
    ///   - challenges: the response's `WWW-Authenticate` headers.
    ///   - round: how many answers this request already made to fresh challenges (0 at the first 401).
    ///   - method: the request's method (Digest signs it).
    /// - Returns: the `Authorization` to send again with, or nil when there is no credential for
    ///   `url` (the 401 stands).
    /// - Throws: ``FerryError`` `authentication_failed`: the server refused the password, its
    ///   challenge is malformed or of a kind Ferry does not speak; and what the lookup throws.
    package func answer(challenges headers: [String], url: URL, round: Int, method: String = "GET") async throws -> String? {
        guard let credential = try await lookup.credential(for: url) else { return nil }
        let challenges = try AuthChallenge.parse(headers)
        let host = url.host ?? "the server"
        let stale = challenges.contains { $0.scheme == "digest" && $0["stale"]?.lowercased() == "true" }
        if round > 0, !stale || round > 2 {
            throw FerryError(
                .authenticationFailed,
                "The server refused the user \(credential.user)'s password for \(host) (from \(credential.source)). Check the user name and password."
            )
        }
        var scheme = try Self.strongest(challenges, credential: credential, host: host, cnonce: cnonce)
        let value = Self.value(&scheme, url: url, method: method)
        answers.withLock { $0[HTTPFetcher.origin(of: url)] = Answer(credential: credential, scheme: scheme) }
        return value
    }

    /// Digest SHA-256, then Digest MD5, then Basic; challenges of other schemes (Bearer,
    /// Negotiate) and Digest challenges Ferry cannot answer are passed over.
    static func strongest(_ challenges: [AuthChallenge], credential: HTTPCredential, host: String, cnonce: @escaping @Sendable () -> String) throws(FerryError) -> Scheme {
        var digests: [DigestAuthorizer] = []
        var refusal: FerryError?
        for challenge in challenges where challenge.scheme == "digest" {
            do {
                digests.append(try DigestAuthorizer(challenge, user: credential.user, password: credential.password, cnonce: cnonce))
            } catch {
                refusal = refusal ?? error
            }
        }
        if let best = digests.max(by: { $0.algorithm.strength < $1.algorithm.strength }) { return .digest(best) }
        if challenges.contains(where: { $0.scheme == "basic" }) {
            guard !credential.user.contains(":") else {
                throw FerryError(.authenticationFailed, "\(host) asks for Basic authentication, which cannot carry a user name with ':' in it.")
            }
            return .basic("Basic " + Data("\(credential.user):\(credential.password)".utf8).base64EncodedString())
        }
        if let refusal { throw refusal }
        let offered = challenges.map(\.scheme).joined(separator: ", ")
        throw FerryError(
            .authenticationFailed,
            "\(host) asks who you are with \(offered.isEmpty ? "no challenge Ferry can read" : offered); Ferry answers Basic and Digest only."
        )
    }

    static func value(_ scheme: inout Scheme, url: URL, method: String) -> String {
        switch scheme {
        case .basic(let value): return value
        case .digest(var digest):
            let value = digest.authorization(method: method, uri: requestTarget(url))
            scheme = .digest(digest)
            return value
        }
    }

    /// The path and query as they go on the request line: what Digest's `uri` must repeat.
    static func requestTarget(_ url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? "/"
        return (path.isEmpty ? "/" : path) + (components?.percentEncodedQuery.map { "?" + $0 } ?? "")
    }
}

/// Each transfer's ``Authenticator``, kept across its attempts so a retry or resume answers at
/// once; started afresh when the transfer's credentials change.
package final class Authenticators: Sendable {
    private let byTransfer = Mutex<[Int64: Authenticator]>([:])

    package init() {}

    package func authenticator(for transfer: Int64, lookup: CredentialLookup) -> Authenticator {
        byTransfer.withLock { all in
            if let kept = all[transfer], kept.fingerprint == lookup.fingerprint { return kept }
            // A bound on memory: forgetting costs each transfer one 401.
            if all.count >= 4096 { all.removeAll() }
            let made = Authenticator(lookup: lookup)
            all[transfer] = made
            return made
        }
    }
}
