import AsyncHTTPClient
import FerryKit
import Foundation
import NIOCore

/// What went wrong in one attempt, in Ferry's terms: an error to show, and whether another
/// attempt might succeed (connection errors, timeouts, 408, 429, 5xx) and when.
struct AttemptFailure: Sendable {
    var error: FerryError
    var retryable: Bool
    var retryAfter: Duration?

    init(_ error: any Error, now: Date = Date()) {
        // An upload's refusal is judged like any other status.
        let error: any Error = (error as? UploadStatusFailure)?.failure ?? error
        retryAfter = nil
        switch error {
        case let failure as HTTPStatusFailure:
            self.error = FerryError(
                .httpStatus, "The server answered \(failure.status) \(failure.reason) for \(failure.url.absoluteString)."
            )
            retryable = RetryPolicy.isRetryable(status: failure.status)
            retryAfter = retryable ? RetryPolicy.retryAfter(failure.retryAfter, now: now) : nil
        case let error as FerryError:
            self.error = error
            retryable = [.connectionFailed, .timeout, .lengthMismatch].contains(error.code)
        case let error as HTTPClientError:
            if [.connectTimeout, .readTimeout, .deadlineExceeded, .writeTimeout].contains(error) {
                self.error = FerryError(.timeout, "The server stopped answering (\(error.shortDescription)).")
            } else if error == .remoteConnectionClosed {
                self.error = FerryError(.connectionFailed, "The server closed the connection before the whole file arrived.")
            } else {
                self.error = FerryError(.connectionFailed, "The connection failed: \(error.shortDescription).")
            }
            retryable = true
        case let error as IOError:
            // "connection refused" rather than NIO's "connection reset (error set): Connection refused (errno: 111)".
            self.error = FerryError(.connectionFailed, "The connection failed: \(String(cString: strerror(error.errnoCode)).lowercased()).")
            retryable = true
        default:
            self.error = FerryError(.connectionFailed, "The connection failed: \(String(describing: error)).")
            retryable = true
        }
    }
}
