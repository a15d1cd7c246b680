import FerryCore
import FerryKit
import Hummingbird

/// `/v1/uploads`: send a file from this machine; the transfer then lives under `/v1/transfers`.
struct UploadRoutes {
    let engine: TransferEngine

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.post("uploads") { request, context in
            let body = try await request.decodeJSON(CreateUploadRequest.self, context: context)
            let session = body.session ?? "cli"
            // Read before creating: a client that listens after this number misses nothing.
            let seq = try await engine.journal.lastEventSeq()
            let transfer = try await engine.upload(body, session: session)
            return try jsonResponse(TransferList(transfers: [transfer], lastEventSeq: seq), status: .created)
        }
    }
}
