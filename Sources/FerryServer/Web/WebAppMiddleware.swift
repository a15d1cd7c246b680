import Crypto
import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// Serves the web app's files from the binary (``EmbeddedResources``): GET and HEAD, `/` as
/// `index.html`. Each file has a strong ETag from its content and `Cache-Control: no-cache`, so a
/// browser asks again each time (a 304 when nothing changed) and sees a new daemon's files at once.
/// Every other request goes on to the router.
struct WebAppMiddleware: RouterMiddleware {
    typealias Context = FerryRequestContext

    struct File: Sendable {
        var body: ByteBuffer
        var contentType: String
        var etag: String
    }

    /// By URL path (`/index.html`, `/js/app.js`).
    let files: [String: File]

    init(files: [String: Data] = EmbeddedResources.files(under: "web/")) {
        self.files = Dictionary(uniqueKeysWithValues: files.map { path, data in
            let digest = SHA256.hash(data: data).prefix(12).hexText
            return ("/" + path, File(body: ByteBuffer(bytes: data), contentType: Self.contentType(path), etag: "\"\(digest)\""))
        })
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else { return try await next(request, context) }
        let path = request.uri.path == "/" ? "/index.html" : request.uri.path
        guard let file = files[path] else { return try await next(request, context) }
        var headers: HTTPFields = [.contentType: file.contentType, .eTag: file.etag, .cacheControl: "no-cache"]
        if let tags = request.headers[.ifNoneMatch], tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == file.etag }) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentLength] = String(file.body.readableBytes)
        return Response(status: .ok, headers: headers, body: request.method == .head ? .init() : .init(byteBuffer: file.body))
    }

    static func contentType(_ path: String) -> String {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "json": "application/json"
        case "webmanifest": "application/manifest+json"
        case "png": "image/png"
        case "yaml": "application/yaml; charset=utf-8"
        default: MediaTypes.forFileName(path)
        }
    }
}
