/// Parses a `text/event-stream` body incrementally (WHATWG HTML §9.2.6): feed it bytes as they
/// arrive, get complete events out.
public struct ServerSentEventParser: Sendable {
    /// One complete event.
    public struct Message: Sendable, Hashable {
        /// The last `id` field received, in this event or an earlier one (it carries over, as the
        /// standard says); nil before the first.
        public var id: String?
        /// The `event` field; `message` when there was none.
        public var event: String
        /// The `data` lines, joined with newlines.
        public var data: String
    }

    private var line: [UInt8] = []
    private var lastByteWasCR = false
    private var id: String?
    private var event = ""
    private var data: [String] = []
    private var hasData = false

    /// A parser at the start of a stream.
    public init() {}

    /// Consumes bytes; returns the events they completed.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> [Message] where Bytes.Element == UInt8 {
        var messages: [Message] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") && lastByteWasCR {
                lastByteWasCR = false
                continue
            }
            lastByteWasCR = byte == UInt8(ascii: "\r")
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                if let message = processLine() { messages.append(message) }
                line.removeAll(keepingCapacity: true)
            } else if line.count < 1 << 20 {
                line.append(byte)
            }
        }
        return messages
    }

    private mutating func processLine() -> Message? {
        if line.isEmpty {
            defer {
                event = ""
                data = []
                hasData = false
            }
            guard hasData else { return nil }
            return Message(id: id, event: event.isEmpty ? "message" : event, data: data.joined(separator: "\n"))
        }
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix(":") { return nil }
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            field = Substring(text)
            value = ""
        }
        switch field {
        case "id": if !value.contains("\0") { id = String(value) }
        case "event": event = String(value)
        case "data":
            data.append(String(value))
            hasData = true
        default: break
        }
        return nil
    }
}
