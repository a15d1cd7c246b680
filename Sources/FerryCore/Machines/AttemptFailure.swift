import AsyncHTTPClient
import FerryModel
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// What went wrong in one attempt, in Ferry's terms: an error to show; whether waiting can mend
/// it (no network, a name that does not resolve, a refused or cut connection, a timeout, a busy
/// server or proxy) or not (404, 410, 401 and 403, an untrusted certificate, a forbidden
/// redirect); the few words a waiting transfer shows; and whether the network's return should
/// end the wait at once.
package struct AttemptFailure: Sendable {
    package var error: FerryError
    /// Waiting can mend it: the transfer waits and tries again; else it fails now.
    var retryable: Bool
    /// When the server said to come back (`Retry-After`), or zero to try again at once.
    var retryAfter: Duration?
    /// Why it waits, in a few words: "no network", "cannot resolve example.com".
    var reason: String
    /// A failure of the network (not a server's answer): a change of the machine's network
    /// (a link or route back) ends the wait.
    var waitsForNetwork: Bool

    /// - Parameters:
    ///   - url: the URL of the attempt, to name its host.
    ///   - proxy: the proxy the attempt went through: connection failures are its.
    ///   - now: for `Retry-After` dates and the time they name.
    package init(_ error: any Error, url: URL? = nil, proxy: ProxyURL? = nil, now: Date = Date(), timeZone: TimeZone = .current) {
        let host = proxy.map { "the proxy \($0.host)" } ?? url?.host ?? "the server"
        // An upload's refusal is judged like any other status.
        let error: any Error = (error as? UploadStatusFailure)?.failure ?? error
        retryAfter = nil
        waitsForNetwork = true
        switch error {
        case let failure as HTTPStatusFailure:
            self.error = FerryError(
                .httpStatus, "The server answered \(failure.status) \(failure.reason) for \(failure.url.absoluteString)."
                    + Self.advice(status: failure.status, clientCertificate: failure.clientCertificate)
            )
            retryable = RetryPolicy.isRetryable(status: failure.status) || failure.status == 407
            retryAfter = retryable ? RetryPolicy.retryAfter(failure.retryAfter, now: now) : nil
            waitsForNetwork = false
            if failure.status == 407 {
                reason = "the proxy needs a user name and password"
            } else if let retryAfter, retryAfter > .seconds(90) {
                reason = "server busy until \(Self.clock(now.addingTimeInterval(retryAfter / .seconds(1)), now: now, timeZone))"
            } else {
                reason = "server busy (\(failure.status) \(failure.reason))"
            }
        case let error as FerryError:
            self.error = error
            retryable = [.connectionFailed, .timeout, .lengthMismatch].contains(error.code)
            reason = error.code == .timeout ? "\(host) stalled" : error.code == .lengthMismatch ? "\(host) ended the file early" : "the connection to \(host) failed"
        case let refusal as CertificateRefusal:
            self.error = FerryError(.untrustedCertificate, refusal.message)
            retryable = false
            waitsForNetwork = false
            reason = ""
        case is NetworkChangeStall:
            self.error = FerryError(.connectionFailed, "The network changed and the connection to \(host) went quiet; reconnecting.")
            retryable = true
            retryAfter = .zero
            reason = "the network changed; reconnecting"
        case let error as HTTPClientError:
            (self.error, retryable, reason) = Self.judge(error, host: host, proxy: proxy)
            waitsForNetwork = retryable
        case let error as NIOSSLError:
            (self.error, retryable, reason) = Self.judge(tls: String(describing: error), host: host)
            waitsForNetwork = retryable
        case let error as NIOSSLExtraError:
            (self.error, retryable, reason) = Self.judge(tls: String(describing: error), host: host)
            waitsForNetwork = retryable
        default:
            let (message, short) = Self.network(error, host: host)
            self.error = FerryError(.connectionFailed, message)
            reason = short
            retryable = true
        }
    }

    /// What to do about a status that waiting does not mend.
    static func advice(status: Int, clientCertificate: HTTPStatusFailure.ClientCertificateTrouble? = nil) -> String {
        switch clientCertificate {
        case .missing: return " It wants a client certificate: --certificate FILE --private-key FILE."
        case .refused: return " It refused the client certificate: one its authority signed, not expired, is needed."
        case nil: break
        }
        return switch status {
        case 401:
            " It needs credentials: give them with --user NAME --password-stdin, --netrc or --netrc-file FILE,"
                + " or keep them for the host with 'ferry credentials add HOST --user NAME'."
        case 403: " It needs credentials: a user name and password (--user NAME --password-stdin), or --header 'Authorization: …'."
        case 404, 410: " The file is not there; check the URL."
        default: ""
        }
    }

    /// AsyncHTTPClient's own errors: timeouts, closed connections and proxy trouble wait;
    /// a malformed request or answer does not.
    static func judge(_ error: HTTPClientError, host: String, proxy: ProxyURL? = nil) -> (FerryError, Bool, String) {
        switch error {
        case .connectTimeout, .deadlineExceeded:
            return (FerryError(.timeout, "\(host) did not answer in time."), true, "\(host) does not answer")
        case .readTimeout, .writeTimeout:
            return (FerryError(.timeout, "\(host) stopped answering (\(error.shortDescription))."), true, "\(host) stalled")
        case .tlsHandshakeTimeout:
            return (FerryError(.timeout, "The secure connection to \(host) timed out."), true, "\(host) does not answer")
        case .remoteConnectionClosed:
            return (FerryError(.connectionFailed, "\(host) closed the connection before the whole file arrived."), true, "\(host) closed the connection")
        case .proxyAuthenticationRequired:
            return (
                FerryError(.connectionFailed, "The proxy needs a user name and password (put them in the proxy URL: http://user:password@proxy:3128)."),
                true, "the proxy needs a user name and password"
            )
        case .invalidProxyResponse where proxy?.user != nil:
            // tinyproxy and others answer a wrong password with 401 rather than 407.
            return (
                FerryError(.connectionFailed, "The proxy refused the connection; check the user name and password in its URL."), true,
                "the proxy refused the connection (check its user name and password)"
            )
        case .invalidProxyResponse:
            return (FerryError(.connectionFailed, "The proxy refused the connection."), true, "the proxy refused the connection")
        case .httpProxyHandshakeTimeout, .socksHandshakeTimeout:
            return (FerryError(.timeout, "The proxy did not answer in time."), true, "the proxy does not answer")
        case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath, .invalidProxyConfiguration:
            return (FerryError(.invalidURL, "The request cannot be made: \(error.shortDescription)."), false, "")
        default:
            return (FerryError(.connectionFailed, "The connection to \(host) failed: \(error.shortDescription)."), true, "the connection to \(host) failed")
        }
    }

    /// TLS: a certificate that is not trusted (or not for this host) fails at once, anything
    /// else (a handshake cut off) waits.
    static func judge(tls description: String, host: String) -> (FerryError, Bool, String) {
        let lower = description.lowercased()
        // Versions: the server's answer was not TLS at all, or only versions before 1.2. Waiting mends neither.
        if lower.contains("wrong_version_number") || lower.contains("http_request") {
            return (
                FerryError(.connectionFailed, "\(host) did not answer in TLS there (is it an http:// address?); Ferry does not download from it over https."),
                false, ""
            )
        }
        if lower.contains("unsupported_protocol") || lower.contains("protocol_version") {
            return (
                FerryError(.connectionFailed, "\(host) offers only TLS versions older than 1.2, which Ferry does not speak; the server must be updated."),
                false, ""
            )
        }
        if lower.contains("certificate") || lower.contains("hostname") {
            return (
                FerryError(.untrustedCertificate, "\(host)'s certificate is not trusted (\(description.prefix(200))); Ferry does not download from it."),
                false, ""
            )
        }
        return (FerryError(.connectionFailed, "The secure connection to \(host) was cut off (\(description.prefix(200)))."), true, "the secure connection to \(host) was cut off")
    }

    /// Failures to connect or to keep a connection: a name that does not resolve, no network,
    /// a refusal, a reset. Returns the full message and the few words.
    static func network(_ error: any Error, host: String) -> (String, String) {
        if let failure = error as? NIOConnectionError {
            if failure.connectionErrors.isEmpty, failure.dnsAError != nil || failure.dnsAAAAError != nil {
                return ("\(host) cannot be resolved to an address (the name is unknown, or there is no DNS).", "cannot resolve \(host)")
            }
            if let first = failure.connectionErrors.first { return network(first.error, host: host) }
        }
        if error is SocketAddressError || error is SocketAddressError.UnknownHost {
            return ("\(host) cannot be resolved to an address (the name is unknown, or there is no DNS).", "cannot resolve \(host)")
        }
        if case ChannelError.connectTimeout = error {
            return ("\(host) did not answer in time.", "\(host) does not answer")
        }
        if let error = error as? IOError {
            let text = String(cString: strerror(error.errnoCode)).lowercased()
            switch error.errnoCode {
            case ECONNREFUSED: return ("\(host) refused the connection.", "\(host) refused the connection")
            case ENETUNREACH, ENETDOWN: return ("There is no network to reach \(host) (\(text)).", "no network")
            case EHOSTUNREACH, EHOSTDOWN: return ("There is no route to \(host) (\(text)).", "no route to \(host)")
            case ETIMEDOUT: return ("\(host) did not answer in time.", "\(host) does not answer")
            case ECONNRESET, EPIPE, ECONNABORTED: return ("The connection to \(host) was cut (\(text)).", "the connection to \(host) was cut")
            default: return ("The connection failed: \(text).", "the connection to \(host) failed")
            }
        }
        return ("The connection failed: \(String(describing: error)).", "the connection to \(host) failed")
    }

    /// `14:05`, or `25 Nov 14:05` beyond today.
    static func clock(_ date: Date, now: Date, _ timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.day, .month, .hour, .minute], from: date)
        let time = String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)
        if calendar.isDate(date, inSameDayAs: now) { return time }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "\(c.day ?? 1) \(months[max(0, (c.month ?? 1) - 1)]) \(time)"
    }
}

/// A running transfer's connection went quiet when the machine's network changed (a link or
/// route came back): it reconnects at once rather than wait out TCP's backoff or the idle timeout.
struct NetworkChangeStall: Error {}
