import FerryKit
import Foundation
import NIOCore

/// `GET /v1/transfers` without JSONEncoder, whose generic machinery was half the time of listing
/// 10,000 transfers (docs/PERFORMANCE.md). The output is byte for byte what
/// `FerryJSON.encoder()` makes of the same ``TransferList`` (sorted keys, ISO 8601 dates,
/// unescaped slashes): TransferListJSONTests compares the two. The rare nested values (upload
/// response, options) still go through JSONEncoder.
enum TransferListJSON {
    static func encode(_ list: TransferList) throws -> ByteBuffer {
        var out = Writer()
        out.bytes.reserveCapacity(64 + list.transfers.count * 512)
        out.raw(#"{"lastEventSeq":"#)
        out.integer(list.lastEventSeq)
        if let cursor = list.nextCursor {
            out.raw(#","nextCursor":"#)
            out.string(cursor)
        }
        out.raw(#","transfers":["#)
        for (index, transfer) in list.transfers.enumerated() {
            if index > 0 { out.raw(",") }
            try out.transfer(transfer)
        }
        out.raw("]}")
        return ByteBuffer(bytes: out.bytes)
    }

    private struct Writer {
        var bytes: [UInt8] = []
        private var first = true

        /// One transfer: its keys in sorted order, the always-present ones as `null` when unknown
        /// (see `Transfer.encode(to:)`).
        mutating func transfer(_ t: Transfer) throws {
            raw("{")
            first = true
            key("attempts"); integer(t.attempts)
            if let value = t.bytesPerSecond { key("bytesPerSecond"); try double(value) }
            key("bytesReceived"); integer(t.bytesReceived)
            if let value = t.checksum { key("checksum"); string(value.description) }
            if let value = t.completedAt { key("completedAt"); date(value) }
            if let value = t.connections { key("connections"); integer(value) }
            key("createdAt"); date(t.createdAt)
            if let value = t.directory { key("directory"); string(value) }
            key("error")
            if let error = t.error {
                raw(#"{"code":"#); string(error.code); raw(#","message":"#); string(error.message); raw("}")
            } else {
                raw("null")
            }
            if let value = t.etaSeconds { key("etaSeconds"); try double(value) }
            if let value = t.fileMissing { key("fileMissing"); raw(value ? "true" : "false") }
            key("folder"); string(t.folder)
            key("id"); integer(t.id)
            key("kind"); string(t.kind.rawValue)
            if let value = t.method { key("method"); string(value) }
            if let value = t.mirrors { key("mirrors"); try encoded(value) }
            if let value = t.options { key("options"); try encoded(value) }
            key("path"); optional(t.path)
            if let value = t.priority { key("priority"); string(value.rawValue) }
            if let value = t.ranges { key("ranges"); try encoded(value) }
            if let value = t.response { key("response"); try encoded(value) }
            if let value = t.retryAt { key("retryAt"); date(value) }
            key("session"); string(t.session)
            key("sha256"); optional(t.sha256)
            if let value = t.sourcePath { key("sourcePath"); string(value) }
            if let value = t.startAfter { key("startAfter"); date(value) }
            key("state"); string(t.state.rawValue)
            if let value = t.taskDescription { key("taskDescription"); string(value) }
            key("totalBytes")
            if let total = t.totalBytes { integer(total) } else { raw("null") }
            key("updatedAt"); date(t.updatedAt)
            if let value = t.uploadProtocol { key("uploadProtocol"); string(value.rawValue) }
            key("url"); string(t.url)
            if let value = t.verifiedBy { key("verifiedBy"); try encoded(value) }
            if let value = t.waitReason { key("waitReason"); string(value) }
            raw("}")
        }

        mutating func raw(_ text: StaticString) {
            text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        }

        private mutating func key(_ name: StaticString) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            bytes.append(UInt8(ascii: "\""))
            raw(name)
            raw("\":")
        }

        mutating func integer(_ value: some BinaryInteger) {
            bytes.append(contentsOf: String(value).utf8)
        }

        /// As JSONEncoder writes a Double: its description, without a trailing `.0`.
        private mutating func double(_ value: Double) throws {
            guard value.isFinite else { throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(value) is not valid JSON.")) }
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            bytes.append(contentsOf: text.utf8)
        }

        private mutating func optional(_ value: String?) {
            if let value { string(value) } else { raw("null") }
        }

        /// A JSON string: `"` and `\` escaped, control characters as JSONEncoder writes them,
        /// everything else (slashes, non-ASCII) as it is.
        mutating func string(_ value: String) {
            bytes.append(UInt8(ascii: "\""))
            defer { bytes.append(UInt8(ascii: "\"")) }
            // Most text needs no escape: copied in one go.
            guard value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                bytes.append(contentsOf: value.utf8)
                return
            }
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\""): raw(#"\""#)
                case UInt8(ascii: "\\"): raw(#"\\"#)
                case 0x0A: raw(#"\n"#)
                case 0x0D: raw(#"\r"#)
                case 0x09: raw(#"\t"#)
                case 0x08: raw(#"\b"#)
                case 0x0C: raw(#"\f"#)
                case 0x00..<0x20:
                    raw(#"\u00"#)
                    bytes.append(Self.hex[Int(byte >> 4)])
                    bytes.append(Self.hex[Int(byte & 0xF)])
                default: bytes.append(byte)
                }
            }
        }

        private static let hex = Array("0123456789abcdef".utf8)

        /// `yyyy-MM-ddTHH:mm:ssZ` in UTC, whole seconds, as `.iso8601` writes it.
        private mutating func date(_ value: Date) {
            var seconds = time_t(value.timeIntervalSince1970.rounded(.down))
            var parts = tm()
            gmtime_r(&seconds, &parts)
            bytes.append(UInt8(ascii: "\""))
            digits(Int(parts.tm_year) + 1900, 4); bytes.append(UInt8(ascii: "-"))
            digits(Int(parts.tm_mon) + 1, 2); bytes.append(UInt8(ascii: "-"))
            digits(Int(parts.tm_mday), 2); bytes.append(UInt8(ascii: "T"))
            digits(Int(parts.tm_hour), 2); bytes.append(UInt8(ascii: ":"))
            digits(Int(parts.tm_min), 2); bytes.append(UInt8(ascii: ":"))
            digits(Int(parts.tm_sec), 2)
            raw("Z\"")
        }

        private mutating func digits(_ value: Int, _ width: Int) {
            let text = String(value)
            for _ in text.utf8.count..<max(width, text.utf8.count) { bytes.append(UInt8(ascii: "0")) }
            bytes.append(contentsOf: text.utf8)
        }

        private mutating func encoded(_ value: some Encodable) throws {
            bytes.append(contentsOf: try FerryJSON.encoder().encode(value))
        }
    }
}
