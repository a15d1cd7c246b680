import Crypto
import FerryKit
import Foundation
import NIOCore

/// The DownloadSink before StreamHasher (SHA-256 of each chunk inline, in `append`), with the
/// current interface, for bench/run --variant: `bench/build-variant` builds ferry with it in
/// place of Sources/FerryCore/Transfer/DownloadSink.swift, to measure what StreamHasher buys.
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
        do throws(FerryError) {
            try part.read(first: part.length) { hasher.update(bufferPointer: $0) }
        } catch {
            failure = error
        }
        self.hasher = hasher
        hashed = part.length
    }

    func append(_ buffer: ByteBuffer) async throws {
        try buffer.withUnsafeReadableBytes { bytes in
            try part.append(bytes)
            hasher.update(bufferPointer: bytes)
        }
        hashed = part.length
    }

    func sync() throws(FerryError) {
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
