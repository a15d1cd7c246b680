import Crypto
import FerryKit
import Foundation
import NIOCore

/// The part file and the SHA-256 of its bytes, computed as they stream in (no second pass over
/// a large file). Owned by one worker at a time: it lends the sink to the download task it races
/// against its stop signal, and uses it again only after that task has ended.
final class DownloadSink: @unchecked Sendable {
    private let part: PartFile
    private var hasher = SHA256()
    /// Bytes `0..<hashed` are in `hasher`.
    private var hashed: Int64 = 0

    /// Opens the part file and cuts it to the bytes the journal knows to be durable.
    init(url: URL, durableBytes: Int64) throws(FerryError) {
        part = try PartFile(url: url)
        try part.truncate(to: durableBytes)
    }

    var url: URL { part.url }
    var length: Int64 { part.length }

    /// Drops every byte: the transfer starts over from zero.
    func restart() throws(FerryError) {
        try part.truncate(to: 0)
        hasher = SHA256()
        hashed = 0
    }

    /// Hashes the bytes already on disk, once, before new bytes are appended after them.
    func hashExisting() throws(FerryError) {
        guard hashed < part.length else { return }
        var hasher = SHA256()
        try part.read(first: part.length) { hasher.update(bufferPointer: $0) }
        self.hasher = hasher
        hashed = part.length
    }

    func append(_ buffer: ByteBuffer) throws {
        try buffer.withUnsafeReadableBytes { bytes in
            try part.append(bytes)
            hasher.update(bufferPointer: bytes)
        }
        hashed = part.length
    }

    func sync() throws(FerryError) {
        try part.sync()
    }

    /// Lower-case hex SHA-256 of the whole file.
    func sha256() throws(FerryError) -> String {
        try hashExisting()
        return hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    func close() {
        part.close()
    }
}
