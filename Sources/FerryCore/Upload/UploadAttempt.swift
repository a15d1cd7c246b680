import AsyncHTTPClient
import Crypto
import FerryModel
import Foundation
import NIOSSL
import Logging
import NIOCore
import NIOHTTP1

/// One attempt of an upload, after the worker has claimed it: find out the protocol (once),
/// then send the file plainly, or resume it from the server's offset (tus, IETF), and return
/// the server's final answer. Bytes are read from the file as they are sent.
struct UploadAttempt: Sendable {
    let http: HTTPClient
    /// The options' authorities, when they add any.
    let tls: TLSConfiguration?
    let store: TransferStore
    let progress: ProgressBoard
    /// The session's and transfer's extra headers.
    let extraHeaders: [(name: String, value: String)]
    /// Waits as bandwidth limits require before each chunk.
    let pace: @Sendable (Int) async throws -> Void
    /// How long a server may take to answer a request without a body (with one, the answer
    /// comes after the upload; the idle watchdog and the read timeout bound that).
    let headTimeout: Duration
    let userAgent: String
    let logger: Logger
    /// Answers 401s (Basic or Digest, signed with each request's method); nil when a configured
    /// `Authorization` header speaks for the upload.
    var auth: Authenticator? = nil

    func run(_ record: TransferRecord) async throws -> RecordedResponse {
        let id = record.transferId
        guard let path = record.sourcePath, let url = URL(string: record.url) else {
            throw FerryError(.internalError, "Upload \(id) has no file or URL.")
        }
        let source = UploadSource(path: path)
        let size = try source.verify(record.sourceIdentity)
        var uploadProtocol = record.uploadProtocol ?? .auto
        if uploadProtocol == .auto {
            let options = try await send(.OPTIONS, url, headers: [])
            uploadProtocol = UploadRequests.discover(status: options.status, headers: options.headers)
            let chosen = uploadProtocol
            try await store.record(.uploadProtocol(chosen), of: id)
            logger.debug("upload protocol", metadata: ["transfer.id": "\(id)", "upload.protocol": "\(chosen.rawValue)"])
        }
        let response: RecordedResponse
        switch uploadProtocol {
        case .plain, .auto:
            response = try await sendWhole(record, url: url, source: source, size: size)
        case .tus, .ietf:
            response = try await sendResumable(record, url: url, source: source, size: size, tus: uploadProtocol == .tus)
        }
        // Sent what was asked: the same file from the first byte to the last.
        _ = try source.verify(record.sourceIdentity)
        return response
    }

    // MARK: Plain

    private func sendWhole(_ record: TransferRecord, url: URL, source: UploadSource, size: Int64) async throws -> RecordedResponse {
        let id = record.transferId
        try await started(id, offset: 0, size: size)
        let fileName = URL(fileURLWithPath: source.path).lastPathComponent
        let contentType = MediaTypes.forFileName(fileName)
        var headers: [(String, String)] = []
        var parts: (Data, Data)?
        var length = size
        if let field = record.formField {
            let multipart = UploadRequests.Multipart(field: field, fileName: fileName, contentType: contentType)
            headers.append(("Content-Type", multipart.contentType))
            parts = (multipart.preamble, multipart.epilogue)
            length += Int64(multipart.preamble.count + multipart.epilogue.count)
        } else {
            headers.append(("Content-Type", contentType))
        }
        let response = try await send(HTTPMethod(rawValue: record.method ?? "PUT"), url, headers: headers) {
            .stream(chunks(id, source, from: 0, to: size, around: parts, restartingAt: 0, of: size), length: .known(length))
        }
        return try accept(response, url: url)
    }

    // MARK: Resumable

    private func sendResumable(
        _ record: TransferRecord, url: URL, source: UploadSource, size: Int64, tus: Bool
    ) async throws -> RecordedResponse {
        let id = record.transferId
        var uploadURL = record.uploadURL.flatMap(URL.init(string:))
        var offset: Int64 = 0
        if let known = uploadURL {
            let head = try await send(.HEAD, known, headers: tus ? UploadRequests.tusOffset() : UploadRequests.ietfOffset())
            if let serverOffset = UploadRequests.offset(head.headers), (200...299).contains(head.status) {
                offset = serverOffset
                // The server has all of it (an earlier attempt's last bytes arrived, its answer
                // did not): the upload is done; another, empty append would complete it twice.
                if offset == size, tus || head.value("upload-complete") == "?1" {
                    try await started(id, offset: offset, size: size)
                    return try accept(head, url: known)
                }
            } else if [404, 410].contains(head.status) {
                uploadURL = nil  // The server forgot it: create it again.
            } else {
                throw HTTPStatusFailure(status: head.status, reason: head.reason, url: known, retryAfter: head.value("retry-after"))
            }
        }
        if uploadURL == nil {
            let creation = tus
                ? try await send(.POST, url, headers: UploadRequests.tusCreation(size: size, fileName: URL(fileURLWithPath: source.path).lastPathComponent))
                : try await send(HTTPMethod(rawValue: record.method ?? "POST"), url, headers: UploadRequests.ietfCreation(size: size))
            guard (200...299).contains(creation.status) else {
                throw HTTPStatusFailure(status: creation.status, reason: creation.reason, url: url, retryAfter: creation.value("retry-after"))
            }
            guard let location = creation.value("location"), let created = URL(string: location, relativeTo: url)?.absoluteURL,
                ["http", "https"].contains(created.scheme?.lowercased() ?? "")
            else {
                throw FerryError(.uploadRejected, "\(url.absoluteString) accepted the upload but named no usable upload URL (Location).")
            }
            uploadURL = created
            try await store.record(.uploadURL(created.absoluteString), of: id)
        }
        guard let uploadURL else { throw FerryError(.internalError, "No upload URL.") }
        guard offset <= size else {
            throw FerryError(.uploadRejected, "The server says it has \(offset) bytes of a \(size)-byte file; start a new upload.")
        }
        try await started(id, offset: offset, size: size)
        let response = try await send(.PATCH, uploadURL, headers: tus ? UploadRequests.tusAppend(offset: offset) : UploadRequests.ietfAppend(offset: offset)) {
            .stream(chunks(id, source, from: offset, to: size, around: nil, restartingAt: offset, of: size), length: .known(size - offset))
        }
        let accepted = try accept(response, url: uploadURL)
        if tus, let final = UploadRequests.offset(response.headers), final != size {
            throw FerryError(.connectionFailed, "The server has \(final) of \(size) bytes after the upload; continuing.")
        }
        return accepted
    }

    // MARK: Plumbing

    /// Journals where this attempt starts: the server's offset is the durable progress.
    private func started(_ id: Int64, offset: Int64, size: Int64) async throws {
        progress.set(id, bytes: offset, total: size)
        try await store.record(.uploadStarted(offset: offset, size: size), of: id)
    }

    /// The body from `from`, progress counted again from `offset` (a body sent again after a 401).
    private func chunks(
        _ id: Int64, _ source: UploadSource, from: Int64, to: Int64, around parts: (Data, Data)?, restartingAt offset: Int64, of size: Int64
    ) -> UploadBody {
        let progress = progress
        progress.set(id, bytes: offset, total: size)
        let file = source.chunks(from: from, to: to, pace: pace, sent: { progress.add(id, bytes: $0) })
        return UploadBody(preamble: parts?.0, file: file, epilogue: parts?.1)
    }

    private func accept(_ response: RecordedResponse, url: URL) throws -> RecordedResponse {
        guard (200...299).contains(response.status) else {
            throw UploadStatusFailure(
                failure: HTTPStatusFailure(status: response.status, reason: response.reason, url: url, retryAfter: response.value("retry-after")),
                response: response
            )
        }
        return response
    }

    /// One request, answered again when the server asks who the user is (401), its body made
    /// anew for it. After the first answer, the upload's later requests carry it at once: the
    /// discovery's OPTIONS pays the 401, not the file.
    private func send(
        _ method: HTTPMethod, _ url: URL, headers: [(String, String)], body: (() -> HTTPClientRequest.Body)? = nil
    ) async throws -> RecordedResponse {
        let url = HTTPFetcher.withoutUserInfo(url)
        let auth = extraHeaders.contains { $0.name.lowercased() == "authorization" } ? nil : auth
        var authorization = auth?.preemptive(for: url, method: method.rawValue)
        var round = 0
        while true {
            var request = HTTPClientRequest(url: url.absoluteString)
            request.tlsConfiguration = tls
            request.method = method
            request.headers.add(name: "User-Agent", value: userAgent)
            for header in extraHeaders { request.headers.replaceOrAdd(name: header.name, value: header.value) }
            for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
            if let authorization { request.headers.replaceOrAdd(name: "Authorization", value: authorization) }
            if let body { request.body = body() }
            let deadline: NIODeadline = body == nil ? .now() + .init(headTimeout) : .distantFuture
            let response = try await http.execute(request, deadline: deadline, logger: logger)
            if response.status == .unauthorized, let auth,
                let answer = try await auth.answer(challenges: response.headers["WWW-Authenticate"], url: url, round: round, method: method.rawValue)
            {
                _ = try? await response.body.collect(upTo: 64 * 1024)
                authorization = answer
                round += 1
                continue
            }
            return try await RecordedResponse(response)
        }
    }

    /// The SHA-256 of the file sent.
    static func sha256(of path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw FerryError(.sourceChanged, "The file \(path) vanished after the upload.")
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        return FileHasher.hex(hasher.finalize())
    }
}

/// An upload's body: optional multipart preamble, the file's chunks, optional epilogue.
struct UploadBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let preamble: Data?
    let file: UploadSource.Chunks
    let epilogue: Data?

    func makeAsyncIterator() -> Iterator {
        Iterator(preamble: preamble, file: file.makeAsyncIterator(), epilogue: epilogue)
    }

    struct Iterator: AsyncIteratorProtocol {
        var preamble: Data?
        var file: UploadSource.Chunks.Iterator
        var epilogue: Data?

        mutating func next() async throws -> ByteBuffer? {
            if let data = preamble {
                preamble = nil
                return ByteBuffer(bytes: data)
            }
            if let chunk = try await file.next() { return chunk }
            if let data = epilogue {
                epilogue = nil
                return ByteBuffer(bytes: data)
            }
            return nil
        }
    }
}

/// A server's answer with its body read (at most 64 KiB kept).
struct RecordedResponse: Sendable {
    static let maxBodyBytes = 64 * 1024
    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]
    var body: String?
    var bodyTruncated: Bool

    init(_ response: HTTPClientResponse) async throws {
        status = Int(response.status.code)
        reason = response.status.reasonPhrase
        headers = response.headers.map { ($0.name, $0.value) }
        var kept = ByteBuffer()
        var truncated = false
        for try await var chunk in response.body {
            let room = Self.maxBodyBytes - kept.readableBytes
            if chunk.readableBytes > room { truncated = true }
            if room > 0, let slice = chunk.readSlice(length: min(room, chunk.readableBytes)) { kept.writeImmutableBuffer(slice) }
        }
        body = kept.readableBytes > 0 ? String(decoding: kept.readableBytesView, as: UTF8.self) : nil
        bodyTruncated = truncated
    }

    func value(_ name: String) -> String? { headers.first { $0.name.lowercased() == name }?.value }

    /// Headers for the journal: sensitive values redacted, repeated names joined.
    var redactedHeaders: [String: String] {
        var result: [String: String] = [:]
        for (name, value) in headers {
            let shown = TransferOptions.isSensitive(header: name) ? "<redacted>" : value
            result[name] = result[name].map { "\($0), \(shown)" } ?? shown
        }
        return result
    }
}

/// A final non-2xx answer to an upload, with the response kept for the record.
struct UploadStatusFailure: Error {
    var failure: HTTPStatusFailure
    var response: RecordedResponse
}

/// Content types by file extension, for uploads and served files.
package enum MediaTypes {
    package static func forFileName(_ name: String) -> String {
        switch URL(fileURLWithPath: name).pathExtension.lowercased() {
        case "mp3": "audio/mpeg"
        case "m4a", "aac": "audio/mp4"
        case "ogg", "oga": "audio/ogg"
        case "opus": "audio/opus"
        case "flac": "audio/flac"
        case "wav": "audio/wav"
        case "mp4", "m4v": "video/mp4"
        case "webm": "video/webm"
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "pdf": "application/pdf"
        case "json": "application/json"
        case "txt": "text/plain; charset=utf-8"
        case "zip": "application/zip"
        default: "application/octet-stream"
        }
    }
}

extension TransferRecord {
    /// Keeps the server's answer to an upload (sensitive headers redacted).
    mutating func record(_ response: RecordedResponse) {
        responseStatus = response.status
        responseHeaders = try? String(decoding: FerryJSON.encoder().encode(response.redactedHeaders), as: UTF8.self)
        responseBody = response.body
    }
}
