#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FerryModel
import Foundation
import NIOCore

/// The part file as several connections write it: each at its own offsets, through one
/// descriptor (`pwritev` needs no shared position), so it is safe from many tasks at once.
final class RangeFile: Sendable {
    let url: URL
    private let fd: Int32

    init(url: URL) throws(FerryError) {
        self.url = url
        fd = Glibc.open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PartFile.error(errno, "open", url) }
    }

    deinit { Glibc.close(fd) }

    /// Writes the readable bytes of `buffers` at `offset`, in order.
    /// - Returns: the offset after the last byte written.
    func write(_ buffers: [ByteBuffer], at offset: Int64) throws(FerryError) -> Int64 {
        var at = offset
        for buffer in buffers {
            let result: Result<Int64, FerryError> = buffer.withUnsafeReadableBytes { bytes in
                var done = 0
                while done < bytes.count {
                    let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(at) + off_t(done))
                    if n < 0 {
                        if errno == EINTR { continue }
                        return .failure(PartFile.error(errno, "write", url))
                    }
                    done += n
                }
                return .success(Int64(done))
            }
            at += try result.get()
        }
        return at
    }

    func sync() throws(FerryError) {
        guard fsync(fd) == 0 else { throw PartFile.error(errno, "fsync", url) }
    }
}
