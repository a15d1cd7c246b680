/// An HTTP authentication challenge (`401` with `WWW-Authenticate: Basic`), as the delegate sees
/// it: a protection space, the failures so far, the response that asked.
struct Challenge {
    let challenge: URLAuthenticationChallenge
    let url: URL

    init?(_ response: HTTPURLResponse, url: URL, failures: Int) {
        guard let header = response.value(forHTTPHeaderField: "WWW-Authenticate"), header.lowercased().hasPrefix("basic") else { return nil }
        let realm = header.range(of: "realm=\"").flatMap { start in
            header[start.upperBound...].split(separator: "\"", maxSplits: 1).first.map(String.init)
        }
        let space = URLProtectionSpace(
            host: url.host ?? "", port: url.port ?? (url.scheme == "https" ? 443 : 80), protocol: url.scheme,
            realm: realm, authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        challenge = URLAuthenticationChallenge(
            protectionSpace: space, proposedCredential: nil, previousFailureCount: failures, failureResponse: response, error: nil,
            sender: ChallengeSender()
        )
        self.url = url
    }

    /// What the session answers by itself: the URL's user and password, else the storage's
    /// default credential for the space.
    func defaultCredential(_ storage: URLCredentialStorage?, request: URLRequest) -> URLCredential? {
        if let user = url.user, let password = url.password {
            return URLCredential(user: user.removingPercentEncoding ?? user, password: password.removingPercentEncoding ?? password, persistence: .forSession)
        }
        return storage?.defaultCredential(for: challenge.protectionSpace)
    }
}

/// The challenge's sender, which Apple's completion-handler API no longer uses.
final class ChallengeSender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}
