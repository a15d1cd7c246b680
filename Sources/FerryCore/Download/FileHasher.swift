#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Dispatch
import FerryModel
import Foundation
import Synchronization

/// The SHA-256 of a part file, computed on another core as the file grows, from the file itself.
///
/// On CPUs without SHA instructions SHA-256 runs at about 300 MB/s, slower than loopback and
/// than the disk, so hashing each chunk before taking the next made it the bottleneck of a large
/// download (bench/run, scenario 1). Here the writer only says how far the file is written
/// (``hash(through:)``); a serial queue reads the new bytes back through a descriptor of its own
/// (from the page cache, where they were just written) and hashes them. It holds no downloaded
/// buffers, so its memory is one read buffer whatever the file's size or how far it lags; and the
/// hash is of the bytes in the file, not of what was meant to be written there. The bytes of a
/// resumed download already on disk are hashed the same way.
///
/// Everything but the flag is touched only on `queue`, hence `@unchecked Sendable`.
final class FileHasher: @unchecked Sendable {
    /// Read size: large enough that a system call per read costs little next to its hashing,
    /// small enough to stay in the CPU's cache between the copy and the hash, and to be cheap to
    /// allocate once per download (a 256 KiB buffer cost ~40 page faults a file, as malloc gives
    /// it back to the system when freed).
    static let readBytes = 64 << 10

    private let url: URL
    private let queue = DispatchQueue(label: "ferry.sha256")
    private var hasher = SHA256()
    /// Bytes `0..<hashed` of the file are in `hasher`.
    private var hashed: Int64 = 0
    private var failure: FerryError?
    private var fd: Int32 = -1
    private var buffer: UnsafeMutableRawBufferPointer?
    /// Set by ``close()``: the jobs still queued have nothing to do.
    private let closed = Atomic<Bool>(false)

    init(url: URL) {
        self.url = url
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
        buffer?.deallocate()
    }

    /// Starts again from byte 0: the file was cut to nothing.
    func reset() {
        queue.async { [self] in
            hasher = SHA256()
            hashed = 0
            failure = nil
        }
    }

    /// The file now holds at least `length` bytes: hashes those not hashed yet. Returns at once.
    func hash(through length: Int64) {
        queue.async { [self] in
            guard failure == nil, !closed.load(ordering: .relaxed) else { return }
            do throws(FerryError) {
                try read(through: length)
            } catch {
                failure = error
            }
        }
    }

    /// Lower-case hex SHA-256 of the file's first `length` bytes, once every queued job is done.
    func finalize(length: Int64) async throws(FerryError) -> String {
        let result: Result<String, FerryError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                if let failure {
                    continuation.resume(returning: .failure(failure))
                } else if hashed != length {
                    continuation.resume(returning: .failure(FerryError(
                        .fileSystem, "Hashed \(hashed) bytes of \(url.path), which should hold \(length).")))
                } else {
                    continuation.resume(returning: .success(Self.hex(hasher.finalize())))
                }
            }
        }
        return try result.get()
    }

    /// Stops hashing: what is still queued is skipped, and the descriptor closes after it.
    func close() {
        closed.store(true, ordering: .relaxed)
        queue.async { [self] in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }

    /// On `queue`.
    private func read(through length: Int64) throws(FerryError) {
        guard hashed < length else { return }
        if fd < 0 {
            fd = open(url.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw PartFile.error(errno, "open", url) }
        }
        let buffer = self.buffer ?? UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readBytes, alignment: 16)
        self.buffer = buffer
        while hashed < length, !closed.load(ordering: .relaxed) {
            let n = pread(fd, buffer.baseAddress!, Int(min(Int64(buffer.count), length - hashed)), off_t(hashed))
            if n < 0 {
                if errno == EINTR { continue }
                throw PartFile.error(errno, "read", url)
            }
            guard n > 0 else {
                throw FerryError(.fileSystem, "\(url.path) is shorter than the \(length) bytes to hash.")
            }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            hashed += Int64(n)
        }
    }

    static func hex(_ digest: SHA256.Digest) -> String {
        digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
