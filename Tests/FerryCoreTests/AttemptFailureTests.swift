import AsyncHTTPClient
import FerryKit
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import FerryCore

/// Which failures a transfer waits out (and with which few words), and which fail it at once.
@Suite struct AttemptFailureTests {
    let url = URL(string: "https://files.example.com/big.iso")!
    let now = Date(timeIntervalSince1970: 1_764_057_600)  // 2025-11-25 08:00:00 UTC

    func failure(_ error: any Error) -> AttemptFailure {
        AttemptFailure(error, url: url, now: now, timeZone: TimeZone(identifier: "UTC")!)
    }

    static let connectionErrors: [(Int32, String)] = [
        (ECONNREFUSED, "files.example.com refused the connection"),
        (ENETUNREACH, "no network"),
        (ENETDOWN, "no network"),
        (EHOSTUNREACH, "no route to files.example.com"),
        (ETIMEDOUT, "files.example.com does not answer"),
        (ECONNRESET, "the connection to files.example.com was cut"),
    ]

    @Test(arguments: connectionErrors)
    func connectionErrorsWaitForTheNetwork(_ code: Int32, _ reason: String) {
        let judged = failure(IOError(errnoCode: code, reason: "connect"))
        #expect(judged.retryable)
        #expect(judged.waitsForNetwork)
        #expect(judged.reason == reason)
        #expect(judged.error.code == .connectionFailed)
    }

    @Test func aNameThatDoesNotResolveWaits() {
        let judged = failure(SocketAddressError.unknown(host: "files.example.com", port: 443))  // (UnknownHost cannot be made outside NIO)
        #expect(judged.retryable && judged.waitsForNetwork)
        #expect(judged.reason == "cannot resolve files.example.com")
    }

    @Test func timeoutsAndClosedConnectionsWait() {
        #expect(failure(HTTPClientError.connectTimeout).reason == "files.example.com does not answer")
        #expect(failure(HTTPClientError.readTimeout).reason == "files.example.com stalled")
        #expect(failure(HTTPClientError.remoteConnectionClosed).reason == "files.example.com closed the connection")
        #expect(failure(FerryError(.timeout, "No data moved for 30 s; the server stalled.")).reason == "files.example.com stalled")
        for error: any Error in [HTTPClientError.connectTimeout, HTTPClientError.readTimeout, HTTPClientError.remoteConnectionClosed] {
            #expect(failure(error).retryable && failure(error).waitsForNetwork)
        }
    }

    @Test func proxyTroubleWaitsWithAClearReason() {
        let credentials = failure(HTTPClientError.proxyAuthenticationRequired)
        #expect(credentials.retryable)
        #expect(credentials.reason == "the proxy needs a user name and password")
        #expect(failure(HTTPClientError.invalidProxyResponse).reason == "the proxy refused the connection")
        #expect(failure(HTTPClientError.socksHandshakeTimeout).reason == "the proxy does not answer")
        let status = failure(HTTPStatusFailure(status: 407, reason: "Proxy Authentication Required", url: url))
        #expect(status.retryable && !status.waitsForNetwork)
        #expect(status.reason == "the proxy needs a user name and password")
    }

    @Test func aBusyServerWaitsUntilTheTimeItNames() {
        let soon = failure(HTTPStatusFailure(status: 503, reason: "Service Unavailable", url: url, retryAfter: "30"))
        #expect(soon.retryable && !soon.waitsForNetwork)
        #expect(soon.retryAfter == .seconds(30))
        #expect(soon.reason == "server busy (503 Service Unavailable)")
        let later = failure(HTTPStatusFailure(status: 429, reason: "Too Many Requests", url: url, retryAfter: "3900"))
        #expect(later.reason == "server busy until 09:05")
        let tomorrow = failure(HTTPStatusFailure(status: 503, reason: "Service Unavailable", url: url, retryAfter: "Wed, 26 Nov 2025 06:30:00 GMT"))
        #expect(tomorrow.reason == "server busy until 26 Nov 06:30")
    }

    @Test(arguments: [400, 401, 403, 404, 410, 416, 451])
    func answersThatWaitingCannotChangeFail(_ status: Int) {
        let judged = failure(HTTPStatusFailure(status: status, reason: "No", url: url))
        #expect(!judged.retryable)
        #expect(judged.error.code == .httpStatus)
    }

    @Test func anUntrustedCertificateFailsAndACutHandshakeWaits() {
        let hostname = failure(NIOSSLExtraError.failedToValidateHostname)
        #expect(!hostname.retryable)
        #expect(hostname.error.code == .untrustedCertificate)
        let cut = failure(NIOSSLError.uncleanShutdown)
        #expect(cut.retryable && cut.waitsForNetwork)
        #expect(cut.reason == "the secure connection to files.example.com was cut off")
    }

    @Test func aForbiddenRedirectOrABadURLFails() {
        #expect(!failure(FerryError(.redirectRefused, "https → http")).retryable)
        #expect(!failure(HTTPClientError.invalidURL).retryable)
    }

    @Test func aNetworkChangeReconnectsAtOnce() {
        let judged = failure(NetworkChangeStall())
        #expect(judged.retryable)
        #expect(judged.retryAfter == .zero)
    }

    /// A server that is not TLS, or speaks only TLS before 1.2: said in words, and not retried.
    @Test func tlsVersionsAreExplainedAndNotRetried() {
        let (plain, plainRetry, _) = AttemptFailure.judge(tls: "sslError([Error: 268435703 error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER])", host: "files.lab")
        #expect(!plainRetry && plain.message.contains("did not answer in TLS"))
        let (old, oldRetry, _) = AttemptFailure.judge(tls: "sslError([Error: 268435696 error:100000f0:SSL routines:OPENSSL_internal:UNSUPPORTED_PROTOCOL])", host: "files.lab")
        #expect(!oldRetry && old.message.contains("older than 1.2"))
        let (cut, cutRetry, _) = AttemptFailure.judge(tls: "uncleanShutdown", host: "files.lab")
        #expect(cutRetry && cut.message.contains("cut off"), "a handshake the network cut still waits")
    }
}
