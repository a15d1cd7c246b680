import FerryCore
import FerryFeeds
import FerryKit
import Foundation
import HTTPTypes
import Hummingbird

/// `/v1/transfers`: create, list, get, pause, resume, cancel, remove, resume data.
struct TransferRoutes {
    let engine: TransferEngine
    /// Shared by every listener's router.
    let pages: TransferPageCache

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.post("transfers") { request, context in try await create(request, context) }
        api.get("transfers") { request, context in try await list(request, context) }
        api.get("transfers/:id") { _, context in
            try jsonResponse(Self.shown(try await engine.transfer(try context.parameters.transferID()), to: context))
        }
        api.patch("transfers/:id") { request, context in
            let id = try await own(context)
            let update = try await request.decodeJSON(TransferUpdate.self, context: context)
            guard update.priority != nil || update.position != nil || update.taskDescription != nil else {
                throw FerryError.invalidRequest("Give 'priority' (high, normal, low), 'position' (first, last) or 'taskDescription'.")
            }
            return try jsonResponse(try await engine.update(id, update))
        }
        // Every transfer, or a session's (`?session=`): those paused or resumed.
        api.post("transfers/pause-all") { request, _ in
            let seq = try await engine.journal.lastEventSeq()
            return try jsonResponse(TransferList(transfers: try await engine.pauseAll(session: request.uri.queryParameters.get("session")), lastEventSeq: seq))
        }
        api.post("transfers/resume-all") { request, _ in
            let seq = try await engine.journal.lastEventSeq()
            return try jsonResponse(TransferList(transfers: try await engine.resumeAll(session: request.uri.queryParameters.get("session")), lastEventSeq: seq))
        }
        api.post("transfers/:id/pause") { _, context in
            try jsonResponse(try await engine.pause(try await own(context)))
        }
        // A body `{"url": ...}` continues from a new URL of the same file; `{"startAfter": ...}`
        // queues it to start no earlier than then.
        api.post("transfers/:id/resume") { request, context in
            let id = try await own(context)
            let body = try await request.decodeJSONIfAny(ResumeRequest.self, context: context)
            if let text = body?.url {
                guard body?.startAfter == nil else { throw FerryError.invalidRequest("Give a new URL or a start date, not both.") }
                return try jsonResponse(try await engine.resume(id, url: try TransferURL.validate(text)))
            }
            if let date = body?.startAfter { return try jsonResponse(try await engine.resume(id, startAfter: date)) }
            return try jsonResponse(try await engine.resume(id))
        }
        // The history: every completed and cancelled transfer (`?session=`), files kept.
        api.delete("transfers") { request, _ in
            guard request.uri.queryParameters.get("finished") == "true" else {
                throw FerryError.invalidRequest("Say ?finished=true to forget every completed and cancelled transfer.")
            }
            return try jsonResponse(RemovedTransfers(ids: try await engine.removeFinished(session: request.uri.queryParameters.get("session"))))
        }
        api.post("transfers/:id/cancel") { request, context in
            let keep = request.uri.queryParameters.get("keepResumeData").map { $0 == "true" || $0 == "1" } ?? false
            return try jsonResponse(try await engine.cancel(try await own(context), keepingResumeData: keep))
        }
        api.delete("transfers/:id") { request, context in
            let deleteFile = request.uri.queryParameters.get("deleteFile").map { $0 == "true" || $0 == "1" } ?? false
            try await engine.remove(try await own(context), deleteFile: deleteFile)
            return Response(status: .noContent)
        }
        api.get("transfers/:id/resume-data") { _, context in
            let data = try await engine.resumeData(for: try context.parameters.transferID())
            return try jsonResponse(ResumeDataResponse(resumeData: data.encoded().base64EncodedString()))
        }
    }

    private func create(_ request: Request, _ context: FerryRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(CreateTransfersRequest.self, context: context)
        switch context.credential {
        case .browserExtension: try ExtensionAccess.checkCreate(body)
        // A member's downloads go into the library: not into any folder the daemon may write.
        case .account(let identity) where identity.role == .member: try ExtensionAccess.checkCreate(body, by: "A member")
        default: break
        }
        let session = body.session ?? "cli"
        try TransferEngine.validateSession(session)
        // Read before creating: a client that listens after this number misses nothing.
        let seq = try await engine.journal.lastEventSeq()
        let transfers: [Transfer]
        if let blob = body.resumeData {
            guard body.urls?.isEmpty ?? true else {
                throw FerryError.invalidRequest("Give either 'urls' or 'resumeData', not both.")
            }
            guard let data = Data(base64Encoded: blob) else {
                throw FerryError(.resumeDataInvalid, "'resumeData' must be the base64 blob the API gave out.")
            }
            transfers = [try await engine.resume(with: try ResumeData(blob: data), session: session)]
        } else {
            var body = body
            if let text = body.metalinkURL {
                guard body.metalink == nil else { throw FerryError.invalidRequest("Give a Metalink or its URL, not both.") }
                try Self.checkMetalinkAlone(body)  // before fetching anything
                let url = try TransferURL.validate(text)
                let data = try await engine.fetchDocument(url, session: session, maximumBytes: 16 << 20)
                body.metalink = String(decoding: data, as: UTF8.self)
            }
            var downloads = try Self.downloads(body, session: session)
            for index in downloads.indices { downloads[index].requestedBy = context.credential?.user }
            // RFC 7240: the client needs the ids alone (`ferry get --no-wait -i`).
            if request.headers[HTTPField.Name("Prefer")!]?.lowercased().contains("return=minimal") == true {
                var records: [TransferRecord] = []
                for download in downloads { records += try await engine.enqueueRecords(download) }
                let ids = CreatedTransferIDs(ids: records.map(\.transferId), states: records.map(\.state), lastEventSeq: seq)
                var response = try jsonResponse(ids, status: .created)
                response.headers[HTTPField.Name("Preference-Applied")!] = "return=minimal"
                return response
            }
            var created: [Transfer] = []
            for download in downloads { created += try await engine.enqueue(download) }
            transfers = created
        }
        return try jsonResponse(TransferList(transfers: transfers, lastEventSeq: seq), status: .created)
    }

    /// A Metalink names its files, mirrors and digests: a request that gives one names none.
    private static func checkMetalinkAlone(_ body: CreateTransfersRequest) throws(FerryError) {
        guard body.urls?.isEmpty ?? true, body.mirrors == nil, body.filename == nil, body.checksum == nil else {
            throw FerryError.invalidRequest("A Metalink names its files, mirrors and digests: give it without urls, mirrors, filename or checksum.")
        }
    }

    /// What a request asks to download: its URLs (one request), or each file of its Metalink.
    /// Everything is checked before any is journaled: one bad URL or file rejects the request.
    private static func downloads(_ body: CreateTransfersRequest, session: String) throws -> [TransferEngine.DownloadRequest] {
        if let document = body.metalink {
            try checkMetalinkAlone(body)
            let metalink = try Metalink.parse(Data(document.utf8))
            return try MetalinkDownloads.requests(for: metalink, body, session: session, locations: body.metalinkLocations ?? [])
        }
        guard let texts = body.urls, !texts.isEmpty else {
            throw FerryError.invalidRequest("Give at least one URL in 'urls', or a document in 'metalink'.")
        }
        guard texts.count <= 10_000 else { throw FerryError.invalidRequest("At most 10000 URLs per request.") }
        let urls = try texts.map { text throws(FerryError) in try TransferURL.validate(text) }
        let mirrors = try (body.mirrors ?? []).map { text throws(FerryError) in try TransferURL.validate(text) }
        let checksum = try body.checksum.map { text throws(FerryError) in try Checksum(parsing: text) }
        return [
            TransferEngine.DownloadRequest(
                urls: urls, session: session, force: body.force ?? false, taskDescription: body.taskDescription, options: body.options,
                mirrors: mirrors, directory: body.directory, createDirectory: body.createDirectory ?? false, outputName: body.filename,
                overwrite: body.overwrite ?? false, checksum: checksum, priority: body.priority ?? .normal, paused: body.paused ?? false
            )
        ]
    }

    private func list(_ request: Request, _ context: FerryRequestContext) async throws -> Response {
        // The mark first: a change made while the list is read makes the next mark another.
        let mark = try await engine.journal.mark()
        let member = context.credential.flatMap { $0.isMember ? $0.user : nil }
        let read = { @Sendable [engine] () async throws -> (ByteBuffer, TransferList) in
            try await Self.page(request, of: engine, as: member)
        }
        guard let mark else { return jsonResponse(body: try await read().0) }
        let key = TransferPageCache.Key(query: request.uri.query ?? "", viewer: member)
        return jsonResponse(body: try await pages.page(for: key, at: mark, read: read))
    }

    /// One page of the list as `member` sees it (nil: whoever sees everything), encoded.
    private static func page(_ request: Request, of engine: TransferEngine, as member: String?) async throws -> (ByteBuffer, TransferList) {
        let query = request.uri.queryParameters
        let session = query.get("session")
        var states: Set<TransferState>?
        if let text = query.get("state"), !text.isEmpty, text != "all" {
            states = try Set(
                text.split(separator: ",").map { name throws(FerryError) in
                    guard let state = TransferState(rawValue: String(name)) else {
                        let known = TransferState.allCases.map(\.rawValue).joined(separator: ", ")
                        throw FerryError.invalidRequest("'\(name.prefix(40))' is not a state; use \(known).")
                    }
                    return state
                }
            )
        }
        let limit = try request.integerQuery("limit", in: 1...10_000)
        let order = query.get("order") ?? "asc"
        guard order == "asc" || order == "desc" else { throw FerryError.invalidRequest("order is asc (oldest first) or desc (newest first).") }
        var list = try await engine.list(session: session, states: states, limit: limit, cursor: query.get("cursor"), newestFirst: order == "desc")
        if let member { list.transfers = list.transfers.map { shown($0, toMember: member) } }
        let body = try TransferListJSON.encode(list)
        return (body, list)
    }

    /// The path's transfer id, when the request may act on it: a member only on their own.
    private func own(_ context: FerryRequestContext) async throws -> Int64 {
        let id = try context.parameters.transferID()
        guard let credential = context.credential, credential.isMember else { return id }
        let transfer = try await engine.transfer(id)
        guard transfer.requestedBy == credential.user else {
            throw FerryError(
                .forbidden,
                "Transfer \(id) is \(transfer.requestedBy.map { "\($0)'s" } ?? "the server's"): a member pauses, resumes, cancels or removes only their own."
            )
        }
        return id
    }

    /// A transfer as a member sees it: another's without its options and upload response (their
    /// headers, cookies and answers are theirs).
    static func shown(_ transfer: Transfer, to context: FerryRequestContext) -> Transfer {
        shown(transfer, toMember: context.credential.flatMap { $0.isMember ? $0.user : nil })
    }

    static func shown(_ transfer: Transfer, toMember member: String?) -> Transfer {
        guard let member, transfer.requestedBy != member else { return transfer }
        var shown = transfer
        shown.options = nil
        shown.response = nil
        return shown
    }
}
