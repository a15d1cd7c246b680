import FerryKit
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Renders every error as `{"error": {"code": ..., "message": ...}}` with a fitting status.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as FerryError {
            return Self.response(error)
        } catch let error as HTTPError {
            let code: FerryError.Code =
                switch error.status.code {
                case 404: .notFound
                case 401: .unauthorized
                case 400, 413, 415, 422: .invalidRequest
                default: .internalError
                }
            let message = error.body ?? (error.status == .notFound
                ? "There is no \(request.method.rawValue) \(request.uri.path). See /v1/openapi.yaml for the API."
                : error.status.reasonPhrase)
            return Self.response(FerryError(code, message), status: error.status)
        } catch is DecodingError {
            return Self.response(.invalidRequest("The request body is not the JSON this endpoint expects. See /v1/openapi.yaml."))
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(error)"])
            return Self.response(FerryError(.internalError, "Internal error: \(error)"))
        }
    }

    static func status(for code: FerryError.Code) -> HTTPResponse.Status {
        switch code {
        case .invalidRequest, .invalidURL, .unsupportedScheme, .resumeDataInvalid, .opmlInvalid, .metalinkInvalid, .catalogBadRequest: .badRequest
        case .unauthorized: .unauthorized
        case .forbiddenHost, .forbiddenOrigin, .forbidden: .forbidden
        case .notFound: .notFound
        case .invalidState, .cancelled, .leaseLost: .conflict
        case .resumeDataStale: .gone
        // The URL the caller gave does not lead to a feed Ferry can read: the request cannot be
        // carried out as made (a 5xx would blame the daemon).
        case .feedInvalid, .feedTooLarge, .feedUnavailable, .feedCredentials, .authenticationFailed: .unprocessableContent
        // A site the caller named (a login form's) cannot be reached, or refused: the same.
        case .connectionFailed, .timeout, .untrustedCertificate, .httpStatus: .unprocessableContent
        // The catalog, the daemon's own upstream, misbehaved, not this request.
        case .catalogUnreachable, .catalogBadResponse: .badGateway
        case .catalogThrottled: .tooManyRequests
        case .catalogTimeout: .gatewayTimeout
        default: .internalServerError
        }
    }

    static func response(_ error: FerryError, status: HTTPResponse.Status? = nil) -> Response {
        let body = (try? FerryJSON.encoder().encode(ErrorResponse(error: error.info))) ?? Data()
        return Response(
            status: status ?? Self.status(for: error.code),
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: body))
        )
    }
}
