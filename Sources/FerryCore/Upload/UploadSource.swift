#if canImport(Glibc)
import Glibc
#endif
import FerryModel
import Foundation
import NIOCore

/// The file an upload sends, read as it is sent (never copied), and the identity it had when
/// the upload was created — size, modification time and inode — so a file that changes or
/// vanishes before the upload completes fails it instead of sending a mix.
struct UploadSource: Sendable {
    let path: String

    /// `size:mtime-nanoseconds:inode`
    static func identity(of path: String) throws(FerryError) -> (identity: String, size: Int64) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw FerryError(.fileSystem, "Cannot read \(path): \(String(cString: strerror(errno))).")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw FerryError.invalidRequest("\(path) is not a regular file.")
        }
        let mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        return ("\(info.st_size):\(mtime):\(info.st_ino)", Int64(info.st_size))
    }

    /// Checks the file is still the one the upload was created for.
    /// - Returns: its size.
    func verify(_ expected: String?) throws(FerryError) -> Int64 {
        let current: (identity: String, size: Int64)
        do {
            current = try Self.identity(of: path)
        } catch {
            throw FerryError(.sourceChanged, "The file \(path) is gone or unreadable; the upload cannot complete. Start a new upload.")
        }
        if let expected, current.identity != expected {
            throw FerryError(.sourceChanged, "The file \(path) changed since the upload started; start a new upload to send the new version.")
        }
        return current.size
    }

    /// The bytes `offset..<end`, in chunks, each after `pace` allows it; `sent` is told of each.
    func chunks(
        from offset: Int64, to end: Int64, chunkSize: Int = 64 * 1024,
        pace: @escaping @Sendable (Int) async throws -> Void, sent: @escaping @Sendable (Int) -> Void
    ) -> Chunks {
        Chunks(path: path, offset: offset, end: end, chunkSize: chunkSize, pace: pace, sent: sent)
    }

    struct Chunks: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let path: String
        let offset: Int64
        let end: Int64
        let chunkSize: Int
        let pace: @Sendable (Int) async throws -> Void
        let sent: @Sendable (Int) -> Void

        func makeAsyncIterator() -> Iterator {
            Iterator(chunks: self, position: offset)
        }

        /// Closes the file when the iterator goes away, finished or not.
        final class Descriptor {
            var fd: Int32 = -1
            deinit { if fd >= 0 { close(fd) } }
        }

        struct Iterator: AsyncIteratorProtocol {
            let chunks: Chunks
            var position: Int64
            let file = Descriptor()

            mutating func next() async throws -> ByteBuffer? {
                guard position < chunks.end else { return nil }
                if file.fd < 0 {
                    file.fd = open(chunks.path, O_RDONLY | O_CLOEXEC)
                    guard file.fd >= 0 else {
                        throw FerryError(.sourceChanged, "The file \(chunks.path) vanished during the upload.")
                    }
                }
                let want = Int(Swift.min(Int64(chunks.chunkSize), chunks.end - position))
                try await chunks.pace(want)
                var buffer = ByteBufferAllocator().buffer(capacity: want)
                let fd = file.fd, position = position
                let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { pointer in
                    Swift.max(0, pread(fd, pointer.baseAddress!, want, off_t(position)))
                }
                guard read == want else {
                    throw FerryError(.sourceChanged, "The file \(chunks.path) got shorter during the upload; start a new upload.")
                }
                self.position += Int64(read)
                chunks.sent(read)
                return buffer
            }
        }
    }
}
