#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Dispatch
import FerryKit
import Foundation
import NIOCore
import Synchronization

/// The SHA-256 of a download, computed beside it instead of in its way.
///
/// On CPUs without SHA instructions SHA-256 runs at about 300 MB/s, slower than loopback and
/// than the disk, so hashing each chunk before taking the next made it the bottleneck of a large
/// download (bench/run, scenario 1). Here every change to the hash is a job on one serial queue,
/// in the order the worker made it: the worker writes the next chunk while another core hashes
/// the last one. Memory stays bounded whatever the file's size: once ``maxPendingBytes`` wait
/// to be hashed, ``update(_:)`` waits until half of them are done.
///
/// Each ``update(_:)`` is one job: the ``DownloadSink`` hands over what it wrote in one batch
/// (about 1 MiB), not each network read (up to 64 KiB), so the hashing thread is woken 16 times
/// less often.
///
/// `hasher` and `failure` are touched only on `queue`, hence `@unchecked Sendable`.
final class StreamHasher: @unchecked Sendable {
    static let maxPendingBytes = 8 << 20

    private let queue = DispatchQueue(label: "ferry.sha256")
    private var hasher = SHA256()
    private var failure: FerryError?
    private let pending = Mutex<Pending>(Pending())

    private struct Pending {
        var bytes = 0
        var waiter: CheckedContinuation<Void, Never>?
    }

    /// Starts again from the hash of no bytes.
    func reset() {
        queue.async { [self] in
            hasher = SHA256()
            failure = nil
        }
    }

    /// Hashes the first `count` bytes of a file (the part of a download already on disk), through
    /// its own descriptor: the caller may go on appending after them meanwhile.
    func hashFile(at url: URL, first count: Int64) {
        queue.async { [self] in
            do throws(FerryError) {
                let file = try PartFile(url: url, readOnly: true)
                defer { file.close() }
                guard file.length >= count else {
                    throw FerryError(.fileSystem, "\(url.path) is shorter than the \(count) bytes to hash.")
                }
                try file.read(first: count) { hasher.update(bufferPointer: $0) }
            } catch {
                failure = error
            }
        }
    }

    /// Queues `buffers`, in order, as one job; returns at once unless too many bytes already wait
    /// to be hashed.
    func update(_ buffers: [ByteBuffer]) async {
        let count = buffers.reduce(0) { $0 + $1.readableBytes }
        guard count > 0 else { return }
        pending.withLock { $0.bytes += count }
        queue.async { [self] in
            for buffer in buffers {
                buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            }
            let waiter = pending.withLock { pending -> CheckedContinuation<Void, Never>? in
                pending.bytes -= count
                guard pending.bytes <= Self.maxPendingBytes / 2 else { return nil }
                defer { pending.waiter = nil }
                return pending.waiter
            }
            waiter?.resume()
        }
        guard pending.withLock({ $0.bytes > Self.maxPendingBytes }) else { return }
        await withCheckedContinuation { continuation in
            let drained = pending.withLock { pending -> Bool in
                guard pending.bytes > Self.maxPendingBytes / 2 else { return true }
                pending.waiter = continuation
                return false
            }
            if drained { continuation.resume() }
        }
    }

    /// Lower-case hex SHA-256 of every byte queued since the last reset, once they are hashed.
    func finalize() async throws(FerryError) -> String {
        let result: Result<String, FerryError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                if let failure {
                    continuation.resume(returning: .failure(failure))
                } else {
                    continuation.resume(returning: .success(Self.hex(hasher.finalize())))
                }
            }
        }
        return try result.get()
    }

    static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
