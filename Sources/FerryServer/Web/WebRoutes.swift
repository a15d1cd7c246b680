import AsyncHTTPClient
import FerryCore
import FerryKit
import FerryListening
import Foundation
import HTTPTypes
import Hummingbird

/// What the web app needs beyond the API: the login link flow and the library's files (with
/// Range, so `<audio>` can seek).
struct WebRoutes {
    let engine: TransferEngine
    let podcasts: PodcastLibrary
    let login: WebLogin
    let accounts: AccountLibrary
    let address: DaemonAddress

    /// Routes outside `/v1` (no token: the login link is the credential).
    func registerPublic(on router: Router<FerryRequestContext>) {
        router.get("login") { request, context in
            switch request.uri.queryParameters.get("code").flatMap({ login.redeem($0) }) {
            case .machine?:
                return Response(status: .seeOther, headers: [.location: "/", .setCookie: login.cookie()])
            case .account(let user)?:
                let secret = try await accounts.startSession(for: user, userAgent: request.headers[.userAgent], address: context.remoteAddress)
                return Response(status: .seeOther, headers: [.location: "/", .setCookie: AccountLogin.cookie(secret, secure: false)])
            case nil:
                return Response(
                    status: .unauthorized, headers: [.contentType: "text/html; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: Self.expiredPage))
                )
            }
        }
        router.post("logout") { _, _ in
            Response(status: .noContent, headers: [.setCookie: "\(WebLogin.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"])
        }
    }

    func registerAPI(on api: RouterGroup<FerryRequestContext>) {
        // `ferry open` asks for a link with the token; the browser then follows it. With a user,
        // the link signs that account in (`ferry open --user alice`: alice's places on this screen).
        api.post("login-links") { request, context in
            let user = try await request.decodeJSONIfAny(LoginLinkRequest.self, context: context)?.user
            if let user { _ = try await accounts.account(user) }
            let base = address.url ?? ""
            let code = login.makeCode(for: user)
            return try jsonResponse(LoginLink(url: "\(base)/login?code=\(code)", expiresInSeconds: Int(WebLogin.linkLifetime)), status: .created)
        }
        api.get("transfers/:id/file") { request, context in
            let id = try context.parameters.transferID()
            let transfer = try await engine.transfer(id)
            guard transfer.state == .completed, let path = transfer.path else {
                throw FerryError.invalidState("Transfer \(id) is \(transfer.state.rawValue); only a completed transfer has a file.")
            }
            return try await serve(path, etag: transfer.sha256 ?? "", what: "The file of transfer \(id)", request, context)
        }
        // An episode from its host, before or while it downloads: the player's Range passes
        // through and the body streams back (as fast as the browser reads it).
        api.get("episodes/:id/stream") { request, context in
            let id = try context.parameters.mediaID("an episode")
            let upstream = try await podcasts.stream(episode: id, range: request.headers[.range])
            // Audio or video only: anything else the host says it is (an HTML page) would be
            // served from the web app's own origin, so it goes out as bytes, never rendered.
            let type = upstream.headers.first(name: "Content-Type") ?? ""
            let media = type.lowercased().hasPrefix("audio/") || type.lowercased().hasPrefix("video/")
            // (SecurityHeadersMiddleware adds nosniff and the app's content security policy.)
            var headers: HTTPFields = [.cacheControl: "private, no-store", .contentType: media ? type : "application/octet-stream"]
            for (name, field) in [("Content-Length", HTTPField.Name.contentLength), ("Content-Range", .contentRange),
                                  ("Accept-Ranges", .acceptRanges), ("ETag", .eTag), ("Last-Modified", .lastModified)] {
                if let value = upstream.headers.first(name: name) { headers[field] = value }
            }
            return Response(
                status: .init(code: Int(upstream.status.code)), headers: headers, body: ResponseBody(asyncSequence: upstream.body)
            )
        }
        // An episode's file wherever it came from: its transfer, or found in the podcast's
        // folder without one (a journal rebuilt from disk, a transfer removed).
        api.get("episodes/:id/file") { request, context in
            let id = try context.parameters.mediaID("an episode")
            let path = try await podcasts.episodeFile(id)
            return try await serve(path, etag: "", what: "The file of episode \(id)", request, context)
        }
    }

    /// Read and written a mebibyte at a time: a whole episode to a phone over TLS spends less
    /// on hops between the file's reads and the socket's writes (bench scenario 12).
    static let chunkLength = 1 << 20

    /// A file of the library, whole or one byte range, as `<audio>` asks for it.
    private func serve(_ path: String, etag: String, what: String, _ request: Request, _ context: FerryRequestContext) async throws -> Response {
        let url = URL(fileURLWithPath: path)
        guard engine.library.contains(url), let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let size = (attributes[.size] as? NSNumber)?.intValue
        else {
            throw FerryError(.notFound, "\(what) is no longer in the library.")
        }
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        var headers: HTTPFields = [
            .contentType: MediaTypes.forFileName(url.lastPathComponent),
            .acceptRanges: "bytes",
            .eTag: "\"\(etag.isEmpty ? "\(size)-\(Int(modified))" : etag)\"",
            .cacheControl: "private, max-age=3600",
        ]
        if request.uri.queryParameters.get("download") != nil {
            headers[.contentDisposition] = "attachment; filename*=UTF-8''" + (url.lastPathComponent.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "file")
        }
        let fileIO = FileIO()
        guard size > 0 else { return Response(status: .ok, headers: headers) }
        if let header = request.headers[.range] {
            guard let range = Self.byteRange(header, size: size) else {
                headers[.contentRange] = "bytes */\(size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
            headers[.contentLength] = String(range.count)
            return Response(
                status: .partialContent, headers: headers,
                body: try await fileIO.loadFile(path: path, range: range, context: context, chunkLength: Self.chunkLength)
            )
        }
        headers[.contentLength] = String(size)
        return Response(status: .ok, headers: headers, body: try await fileIO.loadFile(path: path, context: context, chunkLength: Self.chunkLength))
    }

    /// `bytes=a-b`, `bytes=a-`, `bytes=-n` (one range) clamped to the file; nil if unsatisfiable.
    static func byteRange(_ header: String, size: Int) -> ClosedRange<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(","), let dash = header.firstIndex(of: "-") else { return nil }
        let first = header[header.index(header.startIndex, offsetBy: 6)..<dash]
        let last = header[header.index(after: dash)...]
        if first.isEmpty {
            guard let suffix = Int(last), suffix > 0 else { return nil }
            return max(0, size - suffix)...(size - 1)
        }
        guard let start = Int(first), start >= 0, start < size else { return nil }
        let end = last.isEmpty ? size - 1 : min(Int(last) ?? -1, size - 1)
        guard end >= start else { return nil }
        return start...end
    }

    static let expiredPage = """
        <!doctype html><meta charset="utf-8"><title>Ferry</title>
        <p>This login link has expired or was already used. Run <code>ferry open</code> for a new one.</p>
        """
}
