import Crypto
import FerryModel
import Foundation
import NIOCore

/// The DownloadSink before FileHasher and write batches (SHA-256 and a `pwrite` of each network
/// read inline, in `append`), with the current interface, for bench/run --variant:
/// `bench/build-variant` builds ferry with it in place of
/// Sources/FerryCore/Download/DownloadSink.swift, to measure what hashing on another core buys.
final class DownloadSink: @unchecked Sendable {
    private let part: PartFile
    private var hasher = SHA256()
    /// Bytes `0..<hashed` are in `hasher`.
    private var hashed: Int64 = 0
    private var failure: FerryError?

    init(url: URL, durableBytes: Int64) throws(FerryError) {
        part = try PartFile(url: url)
        try part.truncate(to: durableBytes)
    }

    var url: URL { part.url }
    var length: Int64 { part.length }

    func restart() throws(FerryError) {
        try part.truncate(to: 0)
        hasher = SHA256()
        hashed = 0
        failure = nil
    }

    func hashExisting() {
        guard hashed < part.length else { return }
        var hasher = SHA256()
        var left = part.length
        if let file = FileHandle(forReadingAtPath: part.url.path) {
            while left > 0, let data = try? file.read(upToCount: Int(min(left, 1 << 20))), !data.isEmpty {
                hasher.update(data: data)
                left -= Int64(data.count)
            }
            try? file.close()
        }
        if left > 0 { failure = FerryError(.fileSystem, "Could not read \(part.url.path) to hash it.") }
        self.hasher = hasher
        hashed = part.length
    }

    func append(_ buffer: ByteBuffer) throws(FerryError) {
        let result: Result<Void, FerryError> = buffer.withUnsafeReadableBytes { bytes in
            Result { () throws(FerryError) in try part.append([bytes]) }
        }
        try result.get()
        buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        hashed = part.length
    }

    /// Nothing waits to be written: each append wrote its buffer.
    func flush() throws(FerryError) {}

    func sync() async throws(FerryError) {
        try part.sync()
    }

    func sha256() async throws(FerryError) -> String {
        hashExisting()
        if let failure { throw failure }
        return hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    func close() {
        part.close()
    }
}
