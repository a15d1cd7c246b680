import FerryKit
import Foundation
import NIOCore
import Testing

/// The daemon's event stream, decoded from bytes however they are cut into chunks.
@Suite struct EventStreamDecoderTests {
    /// A stream as the daemon writes it, with what a proxy or a newer daemon may add: a comment
    /// (keep-alive), CRLF line ends, an event this version does not know, a broken one.
    static let stream = [
        ": keep-alive\n\n",
        "event: resync\ndata: {\"prunedThrough\":5}\n\n",
        "id: 7\nevent: created\ndata: {\"date\":\"2026-11-24T10:00:00Z\",\"kind\":\"created\",\"seq\":7,\"session\":\"s\",\"transferId\":3}\n\n",
        "id: 9\r\nevent: completed\r\ndata: {\"date\":\"2026-11-24T10:00:01Z\",\"kind\":\"completed\",\"seq\":9,\"session\":\"s\",\"transferId\":3,\r\ndata: \"sha256\":\"ab\"}\r\n\r\n",
        "event: replayed\ndata: {\"through\":9}\n\n",
        "event: progress\ndata: {\"bytesReceived\":10,\"date\":\"2026-11-24T10:00:02Z\",\"kind\":\"progress\",\"session\":\"s\",\"transferId\":4}\n\n",
        "event: teleported\ndata: {\"to\":\"mars\"}\n\n",
        "id: 10\nevent: failed\ndata: {\"kind\":\n\n",
    ].joined()

    /// What each item says, in a comparable form.
    static func summary(_ items: [EventStreamDecoder.Item]) -> [String] {
        items.map { item in
            switch item {
            case .event(let event, let id): "\(event.kind.rawValue) seq \(event.seq.map(String.init) ?? "-") id \(id ?? "-")"
            case .replayed(let end): "replayed through \(end.through)"
            case .resync(let resync): "resync after \(resync.prunedThrough)"
            case .unknown(let message): "unknown \(message.event)"
            }
        }
    }

    @Test func decodesEveryKindOfMessageHoweverTheBytesAreCut() {
        let bytes = Array(Self.stream.utf8)
        let expected = [
            "resync after 5", "created seq 7 id 7", "completed seq 9 id 9", "replayed through 9",
            // The id carries over to later messages, as the SSE standard says.
            "progress seq - id 9", "unknown teleported", "unknown failed",
        ]
        for size in [bytes.count, 1, 2, 3, 7, 64] {
            var decoder = EventStreamDecoder()
            var items: [EventStreamDecoder.Item] = []
            for start in stride(from: 0, to: bytes.count, by: size) {
                items += decoder.feed(ByteBuffer(bytes: bytes[start..<min(bytes.count, start + size)]))
            }
            #expect(Self.summary(items) == expected, "chunks of \(size) bytes")
        }
    }

    @Test func eventsInAChunkSkipsAllButTransferEvents() throws {
        var decoder = EventStreamDecoder()
        let events = decoder.events(in: ByteBuffer(string: Self.stream))
        #expect(events.map(\.kind) == [.created, .completed, .progress])
        let completed = try #require(events.dropFirst().first)
        #expect(completed.sha256 == "ab" && completed.transferId == 3 && completed.session == "s")
        #expect(completed.date == Date(timeIntervalSince1970: 1_795_514_401))
    }
}
