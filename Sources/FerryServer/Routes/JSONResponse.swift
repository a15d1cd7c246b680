import FerryKit
import Foundation
import HTTPTypes
import Hummingbird

/// A list of transfers, written by ``TransferListJSON`` (it can be thousands long).
func jsonResponse(_ list: TransferList, status: HTTPResponse.Status = .ok) throws -> Response {
    jsonResponse(body: try TransferListJSON.encode(list), status: status)
}

/// A podcast with its episodes, written by ``PodcastDetailJSON`` (it can be thousands long).
func jsonResponse(_ detail: PodcastDetail, status: HTTPResponse.Status = .ok) throws -> Response {
    jsonResponse(body: try PodcastDetailJSON.encode(detail), status: status)
}

/// Encodes a value the way the whole API does (``FerryJSON``).
func jsonResponse<Value: Encodable>(_ value: Value, status: HTTPResponse.Status = .ok) throws -> Response {
    jsonResponse(body: ByteBuffer(bytes: try FerryJSON.encoder().encode(value)), status: status)
}

func jsonResponse(body: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
    Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
}

extension Parameters {
    /// A transfer id path parameter, or a clear 400.
    func transferID(_ name: String = "id") throws -> Int64 {
        let text = get(name) ?? ""
        guard let id = Int64(text), id > 0 else {
            throw FerryError.invalidRequest("'\(text.prefix(40))' is not a transfer id; ids are positive numbers (see `ferry ls`).")
        }
        return id
    }
}

extension Request {
    /// A whole-number query parameter within `range`; nil when it is absent or empty.
    /// - Throws: `invalid_request` for anything else, saying the range.
    func integerQuery(_ name: String, in range: ClosedRange<Int>) throws(FerryError) -> Int? {
        guard let text = uri.queryParameters.get(name), !text.isEmpty else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw FerryError.invalidRequest("\(name) must be a number from \(range.lowerBound) to \(range.upperBound) ('\(text.prefix(20))' is not).")
        }
        return number
    }

    /// Decodes a JSON body, turning malformed input into a clear 400.
    func decodeJSON<Value: Decodable>(_ type: Value.Type, context: FerryRequestContext) async throws -> Value {
        guard let value = try await decodeJSONIfAny(type, context: context) else {
            throw FerryError.invalidRequest("The request needs a JSON body.")
        }
        return value
    }

    /// Decodes a JSON body if there is one (nil for an empty body).
    func decodeJSONIfAny<Value: Decodable>(_ type: Value.Type, context: FerryRequestContext) async throws -> Value? {
        let buffer = try await body.collect(upTo: context.maxUploadSize)
        guard buffer.readableBytes > 0 else { return nil }
        do {
            return try FerryJSON.decoder().decode(Value.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw FerryError.invalidRequest("The JSON body is not valid here: \(Self.describe(error))")
        } catch {
            throw FerryError.invalidRequest("The request body is not JSON.")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, _): return "'\(key.stringValue)' is missing."
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "'\(path(context))' has the wrong type."
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "it is not JSON." : "'\(path(context))' is malformed."
        @unknown default: return "it does not match the schema."
        }
    }
}
