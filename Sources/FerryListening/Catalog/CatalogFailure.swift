import AsyncHTTPClient
import FerryKit
import Foundation
import NIOCore

/// Everything that can go wrong talking to Apple's catalog, as the `FerryError` a listener
/// sees: what happened, and what to do about it.
enum CatalogFailure {
    static let throttledByApple = FerryError(.catalogThrottled, "Apple's catalog is limiting requests; try again in a minute.")

    static func badRequest(appleMessage: String) -> FerryError {
        FerryError(.catalogBadRequest, "Apple's catalog refused the request: \"\(appleMessage)\". Check the search term and options.")
    }

    static func notJSON(contentType: String?, source: String) -> FerryError {
        FerryError(
            .catalogBadResponse,
            "The catalog at \(source) answered with something that is not its JSON (\(contentType ?? "no content type")); "
                + "try again later, or check FERRY_CATALOG_URL if it is set."
        )
    }

    /// The error for a response that is not 200.
    /// - Parameter body: read for Apple's `{"errorMessage": ...}` on a 400.
    static func status(_ status: Int, reason: String, body: Data, source: String) -> FerryError {
        switch status {
        case 400:
            struct AppleError: Decodable { var errorMessage: String }
            if let message = try? JSONDecoder().decode(AppleError.self, from: body).errorMessage, !message.isEmpty {
                return badRequest(appleMessage: message)
            }
            return FerryError(.catalogBadRequest, "Apple's catalog refused the request (400 \(reason)). Check the search term and options.")
        case 403, 429:
            return throttledByApple
        default:
            return FerryError(
                .catalogBadResponse,
                "The catalog at \(source) answered \(status) \(reason); try again later, or check FERRY_CATALOG_URL if it is set."
            )
        }
    }

    /// Maps an error thrown while calling the catalog. `FerryError`s pass through unchanged.
    static func error(from error: any Error, source: String) -> FerryError {
        switch error {
        case let error as FerryError:
            return error
        case is CancellationError:
            return cancelled
        case let error as HTTPClientError where error == .cancelled:
            return cancelled
        case let error as HTTPClientError
        where [.readTimeout, .connectTimeout, .writeTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout].contains(error):
            return FerryError(
                .catalogTimeout,
                "Apple's catalog did not answer in time (\(error.shortDescription.lowercased())); "
                    + "check the network connection and try again."
            )
        default:
            let detail =
                switch error {
                case let error as HTTPClientError: error.shortDescription
                // "connection refused" rather than NIO's "connection reset (error set): Connection refused (errno: 111)".
                case let error as IOError: String(cString: strerror(error.errnoCode)).lowercased()
                default: String(describing: error)
                }
            return FerryError(
                .catalogUnreachable,
                "Could not reach Apple's catalog at \(source) (\(detail.prefix(200))); check the network connection, "
                    + "or FERRY_CATALOG_URL if it is set."
            )
        }
    }

    static let cancelled = FerryError(.cancelled, "The search was cancelled before it finished.")
    static let replaced = FerryError(.cancelled, "A newer search replaced this one before it finished.")
}
