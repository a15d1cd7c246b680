import FerryCore
import FerryKit
import Foundation
import Hummingbird
import ServiceLifecycle

/// `/v1/sessions/{session}`: the session's Server-Sent Events stream and acknowledgements.
///
/// The stream first replays the journal after the client's `Last-Event-ID` (or `?after=`, or
/// else the session's last acknowledged event), marks the end of that replay with a `replayed`
/// event, then sends live events. When retention pruned events after that starting point, a
/// `resync` event comes first: the client re-reads the state. Journaled events carry their sequence number as the SSE `id`;
/// live progress has no id, so a reconnect never replays it.
struct EventRoutes {
    let engine: TransferEngine

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.get("sessions/:session") { _, context in
            let session = try sessionName(context)
            let info = SessionInfo(
                name: session,
                acknowledgedSeq: try await engine.journal.acknowledgedSeq(session: session),
                lastEventSeq: try await engine.journal.lastEventSeq()
            )
            return try jsonResponse(info)
        }
        // Ends a session for good: its unfinished transfers cancelled, its events gone.
        api.delete("sessions/:session") { _, context in
            try jsonResponse(try await engine.forgetSession(try sessionName(context)))
        }
        api.post("sessions/:session/ack") { request, context in
            let session = try sessionName(context)
            let body = try await request.decodeJSON(AcknowledgeRequest.self, context: context)
            guard body.through >= 0 else { throw FerryError.invalidRequest("'through' must not be negative.") }
            try await engine.journal.acknowledge(session: session, through: body.through)
            return Response(status: .noContent)
        }
        api.get("sessions/:session/events") { request, context in
            let session = try sessionName(context)
            let after = try await startingPoint(request, session: session)
            return stream(session: session, after: after)
        }
        // Every session's events (the web app's downloads view); starts at `now` by default.
        api.get("events") { request, _ in
            let after = try await startingPoint(request, session: nil)
            return stream(session: nil, after: after)
        }
    }

    private func sessionName(_ context: FerryRequestContext) throws -> String {
        let session = context.parameters.get("session") ?? ""
        try TransferEngine.validateSession(session)
        return session
    }

    private func startingPoint(_ request: Request, session: String?) async throws -> Int64 {
        let text = request.headers[values: .init("Last-Event-ID")!].first ?? request.uri.queryParameters.get("after")
        if let text {
            guard let seq = Int64(text), seq >= 0 else {
                throw FerryError.invalidRequest("Last-Event-ID / after must be an event number, not '\(text.prefix(40))'.")
            }
            return seq
        }
        guard let session else { return try await engine.journal.lastEventSeq() }
        return try await engine.journal.acknowledgedSeq(session: session)
    }

    private func stream(session: String?, after: Int64) -> Response {
        // Subscribe before reading the backlog, so nothing falls between the two.
        let subscription = engine.hub.subscribe(session: session)
        let journal = engine.journal
        let body = ResponseBody { writer in
            var last = after
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            // Events after the starting point were pruned: say so before replaying what is left.
            let pruned = try await journal.prunedSeq(session: session)
            if after < pruned { try await writer.write(ServerSentEvent.encode(Resync(prunedThrough: pruned))) }
            last = try await replay(journal, session: session, after: last, to: &writer)
            try await writer.write(ServerSentEvent.encode(ReplayEnd(through: last)))
            for await message in subscription.cancelOnGracefulShutdown() {
                if subscription.takeLag() {
                    last = try await replay(journal, session: session, after: last, to: &writer)
                }
                switch message {
                case .event(let event):
                    if let seq = event.seq {
                        guard seq > last else { continue }
                        last = seq
                    }
                    try await writer.write(ServerSentEvent.encode(event))
                case .heartbeat:
                    try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                }
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8",
                .cacheControl: "no-cache",
                .init("X-Accel-Buffering")!: "no",
            ],
            body: body
        )
    }

    private func replay(_ journal: any TransferJournal, session: String?, after: Int64, to writer: inout any ResponseBodyWriter) async throws -> Int64 {
        var last = after
        while true {
            let events = try await journal.events(session: session, after: last, limit: 500)
            for event in events {
                try await writer.write(ServerSentEvent.encode(event))
                last = event.seq ?? last
            }
            if events.count < 500 { return last }
        }
    }
}

/// The Server-Sent Events wire format for one event.
enum ServerSentEvent {
    static let encoder = FerryJSON.encoder()

    static func encode(_ event: TransferEvent) -> ByteBuffer {
        message(id: event.seq, name: event.kind.rawValue, data: event)
    }

    static func encode(_ end: ReplayEnd) -> ByteBuffer {
        message(id: nil, name: ReplayEnd.eventName, data: end)
    }

    static func encode(_ resync: Resync) -> ByteBuffer {
        message(id: nil, name: Resync.eventName, data: resync)
    }

    private static func message(id: Int64?, name: String, data: some Encodable) -> ByteBuffer {
        var text = ""
        if let id { text += "id: \(id)\n" }
        text += "event: \(name)\n"
        // JSON never contains a raw newline, so one data line suffices.
        let json = (try? encoder.encode(data)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        text += "data: \(json)\n\n"
        return ByteBuffer(string: text)
    }
}
