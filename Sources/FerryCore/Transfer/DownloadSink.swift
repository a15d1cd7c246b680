import FerryKit
import Foundation
import NIOCore

/// The part file and the SHA-256 of its bytes, computed as they stream in (no second pass over
/// a large file) by a ``StreamHasher`` on another core. Owned by one worker at a time: it lends
/// the sink to the download task it races against its stop signal, and uses it again only after
/// that task has ended.
final class DownloadSink: @unchecked Sendable {
    private let part: PartFile
    private let hasher = StreamHasher()
    /// Bytes `0..<hashed` are in `hasher` (or queued for it).
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
        hasher.reset()
        hashed = 0
    }

    /// Hashes the bytes already on disk, once, before new bytes are appended after them. The
    /// hashing happens on the hasher's queue, so a resumed download streams on meanwhile.
    func hashExisting() {
        guard hashed < part.length else { return }
        hasher.reset()
        hasher.hashFile(at: part.url, first: part.length)
        hashed = part.length
    }

    func append(_ buffer: ByteBuffer) async throws {
        try buffer.withUnsafeReadableBytes { bytes in try part.append(bytes) }
        await hasher.update(buffer)
        hashed = part.length
    }

    /// Makes every byte appended so far durable, off the cooperative threads. May run while the
    /// worker appends more (it touches only the descriptor); the worker waits for it before
    /// closing the sink.
    func sync() async throws(FerryError) {
        try await BlockingIO.run { () throws(FerryError) in try self.part.sync() }
    }

    /// Lower-case hex SHA-256 of the whole file.
    func sha256() async throws(FerryError) -> String {
        hashExisting()
        return try await hasher.finalize()
    }

    func close() {
        part.close()
    }
}
