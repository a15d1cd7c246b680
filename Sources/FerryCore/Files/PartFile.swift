#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FerryModel
import Foundation

/// The file a download streams into (`.partial/<id>.part`): appends at the end, fsyncs on
/// checkpoints, truncates to the last durable length on start. One owner at a time.
final class PartFile {
    let url: URL
    private var fd: Int32
    /// Bytes in the file (written, not necessarily durable).
    private(set) var length: Int64

    /// Opens or creates the part file.
    init(url: URL) throws(FerryError) {
        self.url = url
        fd = Glibc.open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PartFile.error(errno, "open", url) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw PartFile.error(code, "stat", url)
        }
        length = Int64(info.st_size)
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
    }

    /// Cuts the file to `size` bytes (never grows it) and continues writing there.
    func truncate(to size: Int64) throws(FerryError) {
        let size = min(size, length)
        guard ftruncate(fd, off_t(size)) == 0 else { throw PartFile.error(errno, "truncate", url) }
        length = size
    }

    /// IOV_MAX on Linux (which Swift does not import).
    static let maxPieces = 1024

    /// Writes all of `pieces` at the end, in order, with as few system calls as the kernel allows
    /// (one `pwritev` for up to `IOV_MAX` pieces).
    func append(_ pieces: [UnsafeRawBufferPointer]) throws(FerryError) {
        var vectors = pieces.filter { $0.count > 0 }.map {
            iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count)
        }
        var first = 0
        while first < vectors.count {
            let count = min(vectors.count - first, Self.maxPieces)
            let n = vectors[first...].withUnsafeBufferPointer { pwritev(fd, $0.baseAddress, Int32(count), off_t(length)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw PartFile.error(errno, "write", url)
            }
            length += Int64(n)
            // Skip what was written; a short write leaves the rest of a piece for the next call.
            var left = n
            while first < vectors.count, left >= vectors[first].iov_len {
                left -= vectors[first].iov_len
                first += 1
            }
            if left > 0 {
                vectors[first].iov_base = vectors[first].iov_base! + left
                vectors[first].iov_len -= left
            }
        }
    }

    /// Reads the file's length again (others wrote into it).
    func readLength() {
        var info = stat()
        if fstat(fd, &info) == 0 { length = Int64(info.st_size) }
    }

    /// Makes every byte written so far durable.
    func sync() throws(FerryError) {
        guard fsync(fd) == 0 else { throw PartFile.error(errno, "fsync", url) }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    static func error(_ code: Int32, _ operation: String, _ url: URL) -> FerryError {
        if code == ENOSPC || code == EDQUOT {
            // Name the library rather than its hidden folder of part files.
            let folder = url.deletingLastPathComponent()
            let place = folder.lastPathComponent == ".partial" ? folder.deletingLastPathComponent() : folder
            return FerryError(.diskFull, "The disk is full: no space left in \(place.path). Free some space, then resume the transfer.")
        }
        return FerryError(.fileSystem, "Could not \(operation) \(url.path): \(String(cString: strerror(code))).")
    }
}

/// fsyncs a folder, so a rename or link inside it is durable.
func syncDirectory(_ url: URL) {
    let fd = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return }
    fsync(fd)
    close(fd)
}
