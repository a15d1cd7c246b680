import Crypto
import FerryCore
import Foundation
import HTTPTypes
import Hummingbird

/// Serves the web app's files from the binary (``EmbeddedResources``): GET and HEAD, `/` as
/// `index.html`. Each file has a strong ETag from its content and `Cache-Control: no-cache`, so a
/// browser asks again each time (a 304 when nothing changed) and sees a new daemon's files at once.
/// Every other request goes on to the router. `/shell.json` lists the files for the service worker
/// (`sw.js`) to keep for offline use (``shellListing(_:)``).
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
        var served = Dictionary(uniqueKeysWithValues: files.map { path, data in
            ("/" + path, Self.file(data, contentType: Self.contentType(path)))
        })
        served["/shell.json"] = Self.file(Self.shellListing(served), contentType: "application/json")
        self.files = served
    }

    private static func file(_ data: Data, contentType: String) -> File {
        let digest = SHA256.hash(data: data).prefix(12).hexText
        return File(body: ByteBuffer(bytes: data), contentType: contentType, etag: "\"\(digest)\"")
    }

    /// `{"version": ..., "files": ["/css/base.css", ...]}`: every file of the app but the service
    /// worker itself, and a version that changes when any of their bytes do. The worker keeps the
    /// files in a cache named after the version, so a daemon with a new web app replaces it whole
    /// (the worker's own script is compared byte by byte by the browser).
    static func shellListing(_ files: [String: File]) -> Data {
        let paths = files.keys.filter { $0 != "/sw.js" }.sorted()
        let tags = paths.map { "\($0) \(files[$0]!.etag)\n" }.joined()
        let version = SHA256.hash(data: Data(tags.utf8)).prefix(8).hexText
        struct Listing: Encodable { var version: String, files: [String] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(Listing(version: version, files: paths))) ?? Data()
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
