import FerryKit
import Foundation
import NIOCore

/// `GET /v1/transfers` without JSONEncoder, whose generic machinery was half the time of listing
/// 10,000 transfers (bench/reports/2026-11-api.md, "Listing 10,000 transfers"). The output is
/// byte for byte what `FerryJSON.encoder()` makes of the same ``TransferList`` (sorted keys,
/// ISO 8601 dates, unescaped slashes): TransferListJSONTests compares the two. The rare nested
/// values (upload response, options) still go through JSONEncoder, options once per distinct
/// value (a page of transfers queued together shares them: encoding each was a sixth of a page).
enum TransferListJSON {
    static func encode(_ list: TransferList) throws -> ByteBuffer {
        var out = JSONWriter()
        out.bytes.reserveCapacity(64 + list.transfers.count * 512)
        out.raw(#"{"lastEventSeq":"#)
        out.integer(list.lastEventSeq)
        if let cursor = list.nextCursor {
            out.raw(#","nextCursor":"#)
            out.string(cursor)
        }
        out.raw(#","transfers":["#)
        var options: [TransferOptions: [UInt8]] = [:]
        for (index, transfer) in list.transfers.enumerated() {
            if index > 0 { out.raw(",") }
            try out.transfer(transfer, options: &options)
        }
        out.raw("]}")
        return ByteBuffer(bytes: out.bytes)
    }
}

extension JSONWriter {
    /// One transfer: its keys in sorted order, the always-present ones as `null` when unknown
    /// (see `Transfer.encode(to:)`).
    /// - Parameter options: options already encoded, by value.
    mutating func transfer(_ t: Transfer, options: inout [TransferOptions: [UInt8]]) throws {
        beginObject()
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
        if let value = t.httpVersion { key("httpVersion"); string(value) }
        key("id"); integer(t.id)
        key("kind"); string(t.kind.rawValue)
        if let value = t.member { key("member"); string(value) }
        if let value = t.method { key("method"); string(value) }
        if let value = t.mirrors { key("mirrors"); try encoded(value) }
        if let value = t.options {
            key("options")
            if let bytes = options[value] {
                self.bytes.append(contentsOf: bytes)
            } else {
                let bytes = try FerryJSON.encoder().encode(value)
                options[value] = Array(bytes)
                self.bytes.append(contentsOf: bytes)
            }
        }
        key("path"); optional(t.path)
        if let value = t.priority { key("priority"); string(value.rawValue) }
        if let value = t.ranges { key("ranges"); try encoded(value) }
        if let value = t.requestedBy { key("requestedBy"); string(value) }
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
}
