import FerryModel
import Foundation
import NIOCore

/// The part file and the SHA-256 of its bytes, computed as they are written (no second pass over
/// a large file) by a ``FileHasher`` on another core. Owned by one worker at a time: it lends
/// the sink to the download task it races against its stop signal, and uses it again only after
/// that task has ended.
///
/// Network reads are at most 256 KiB (``TransferEngine/connectionReadSize``); the sink writes
/// them in batches of about 1 MiB with one `pwritev` each, a system call (and an update of the
/// file's times) per batch instead of per read.
final class DownloadSink: @unchecked Sendable {
    /// A batch is written once it holds this many bytes…
    static let writeBatchBytes = 1 << 20
    /// …or this many buffers (a chunked body may come in small pieces).
    static let writeBatchCount = 64

    private let part: PartFile
    private let hasher: FileHasher
    /// Appended, not yet written: after `part.length`.
    private var unwritten: [ByteBuffer] = []
    private var unwrittenBytes = 0
    /// False until a byte is appended or the file starts over: until then the file is the
    /// journal's durable bytes, and a stop or failure has nothing to checkpoint.
    private(set) var isTouched = false

    /// Opens the part file and cuts it to the bytes the journal knows to be durable.
    init(url: URL, durableBytes: Int64) throws(FerryError) {
        part = try PartFile(url: url)
        try part.truncate(to: durableBytes)
        hasher = FileHasher(url: url)
    }

    var url: URL { part.url }
    /// Bytes appended so far; those not yet written (``flush()``) included.
    var length: Int64 { part.length + Int64(unwrittenBytes) }

    /// Drops every byte: the transfer starts over from zero.
    func restart() throws(FerryError) {
        isTouched = true
        unwritten = []
        unwrittenBytes = 0
        try part.truncate(to: 0)
        hasher.reset()
    }

    /// Hashes whatever the file holds and is not hashed yet (a resumed download's bytes, or what
    /// a failed write left), on the hasher's queue, so the download streams on meanwhile.
    func hashExisting() {
        hasher.hash(through: part.length)
    }

    func append(_ buffer: ByteBuffer) throws(FerryError) {
        isTouched = true
        unwritten.append(buffer)
        unwrittenBytes += buffer.readableBytes
        if unwrittenBytes >= Self.writeBatchBytes || unwritten.count >= Self.writeBatchCount {
            try flush()
        }
    }

    /// Writes the bytes appended but not yet written, then tells the hasher the file grew. The
    /// worker calls it before every ``sync()`` (each checkpoint, and the finish). After a failed
    /// write (a full disk) the hasher catches up at the next flush or ``sha256()``: it reads
    /// whatever the file holds.
    func flush() throws(FerryError) {
        guard !unwritten.isEmpty else { return }
        let buffers = unwritten
        unwritten = []
        unwrittenBytes = 0
        try Self.withPieces(of: buffers[...]) { pieces throws(FerryError) in try part.append(pieces) }
        hasher.hash(through: part.length)
    }

    /// The readable bytes of `buffers`, valid for the duration of `body`.
    private static func withPieces(
        of buffers: ArraySlice<ByteBuffer>, _ pieces: [UnsafeRawBufferPointer] = [],
        _ body: ([UnsafeRawBufferPointer]) throws(FerryError) -> Void
    ) throws(FerryError) {
        guard let first = buffers.first else { return try body(pieces) }
        let result: Result<Void, FerryError> = first.withUnsafeReadableBytes { bytes in
            Result { () throws(FerryError) in try withPieces(of: buffers.dropFirst(), pieces + [bytes], body) }
        }
        try result.get()
    }

    /// Makes every byte written so far durable, off the cooperative threads. May run while the
    /// worker appends more (it touches only the descriptor); the worker waits for it before
    /// closing the sink.
    func sync() async throws(FerryError) {
        try await BlockingIO.run { () throws(FerryError) in try self.part.sync() }
    }

    /// Lower-case hex SHA-256 of the whole file.
    func sha256() async throws(FerryError) -> String {
        hashExisting()
        return try await hasher.finalize(length: part.length)
    }

    /// The hash may follow the file up to `length` (bytes written by ranges elsewhere).
    func hash(through length: Int64) {
        hasher.hash(through: length)
    }

    /// Ranges were written into the file through another descriptor: its length is read again.
    func adoptWrittenFile() {
        part.readLength()
    }

    func close() {
        hasher.close()
        part.close()
    }
}
