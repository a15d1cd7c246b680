import Foundation
import NIOCore

/// Reads the daemon's event stream (`GET /v1/sessions/{session}/events` or `/v1/events`): feed
/// it the body's chunks as they arrive, get its messages out, decoded. One decoder for the whole
/// stream.
public struct EventStreamDecoder: Sendable {
    /// One message of the stream.
    public enum Item: Sendable {
        /// A transfer event: journaled (its SSE `id` is its `seq`) or live progress (no `id`).
        case event(TransferEvent, id: String?)
        /// The end of the replay of the journal: every event after it is new.
        case replayed(ReplayEnd)
        /// Events after the stream's starting point were pruned: re-read the state
        /// (`transfers(session:)`) rather than count on the replay.
        case resync(Resync)
        /// A message this version cannot decode (a newer daemon's, or a broken one).
        case unknown(ServerSentEventParser.Message)
    }

    private var parser = ServerSentEventParser()
    private let decoder = FerryJSON.decoder()

    /// A decoder at the start of a stream.
    public init() {}

    /// Consumes a chunk of the body; returns the messages it completed, in order.
    public mutating func feed(_ chunk: ByteBuffer) -> [Item] {
        parser.feed(chunk.readableBytesView).map { message in
            let data = Data(message.data.utf8)
            if message.event == ReplayEnd.eventName {
                return (try? decoder.decode(ReplayEnd.self, from: data)).map(Item.replayed) ?? .unknown(message)
            }
            if message.event == Resync.eventName {
                return (try? decoder.decode(Resync.self, from: data)).map(Item.resync) ?? .unknown(message)
            }
            return (try? decoder.decode(TransferEvent.self, from: data)).map { .event($0, id: message.id) } ?? .unknown(message)
        }
    }

    /// The transfer events a chunk completes; everything else skipped.
    public mutating func events(in chunk: ByteBuffer) -> [TransferEvent] {
        feed(chunk).compactMap { item in
            if case .event(let event, _) = item { event } else { nil }
        }
    }
}
