import Foundation

/// Everything needed to continue a download later: the analogue of `URLSession`'s resume data.
///
/// Callers treat it as an opaque, versioned blob (``encoded()``, ``init(blob:)``). The daemon
/// checks it against its journal and the part file on disk before trusting any of it.
public struct ResumeData: Codable, Sendable, Hashable {
    /// The blob format this build writes and reads.
    public static let currentVersion = 1

    /// The blob format it was written in (``currentVersion`` for new data).
    public var version: Int
    /// The ``Transfer/id`` of the transfer it continues.
    public var transferId: Int64
    /// The transfer's session: only a session with this identifier may use it.
    public var session: String
    /// The URL as it was asked for.
    public var url: String
    /// Bytes known to be on disk (fsynced) in the part file.
    public var durableBytes: Int64
    /// The file's size, if the server had said it.
    public var totalBytes: Int64?
    /// The strong ETag, or else the Last-Modified date, sent as `If-Range`.
    public var validator: String?

    /// Resume data for a transfer; the daemon makes it (callers read blobs with ``init(blob:)``).
    /// - Parameters:
    ///   - transferId: the transfer to continue.
    ///   - session: the transfer's session.
    ///   - url: the URL as it was asked for.
    ///   - durableBytes: bytes fsynced in the part file.
    ///   - totalBytes: the file's size, if known.
    ///   - validator: the strong ETag or Last-Modified date to send as `If-Range`.
    public init(
        transferId: Int64, session: String, url: String, durableBytes: Int64, totalBytes: Int64?,
        validator: String?
    ) {
        self.version = Self.currentVersion
        self.transferId = transferId
        self.session = session
        self.url = url
        self.durableBytes = durableBytes
        self.totalBytes = totalBytes
        self.validator = validator
    }

    private struct Envelope: Codable {
        var ferryResumeData: ResumeData
    }

    /// The opaque blob.
    public func encoded() -> Data {
        // Encoding a plain struct of strings and integers cannot fail.
        try! FerryJSON.encoder().encode(Envelope(ferryResumeData: self))
    }

    /// Reads a blob made by ``encoded()``.
    /// - Throws: `FerryError` with code `resume_data_invalid` when it is not resume data, or was
    ///   made by a newer Ferry.
    public init(blob: Data) throws {
        guard let envelope = try? FerryJSON.decoder().decode(Envelope.self, from: blob) else {
            throw FerryError(.resumeDataInvalid, "This is not Ferry resume data.")
        }
        guard envelope.ferryResumeData.version <= Self.currentVersion else {
            throw FerryError(
                .resumeDataInvalid,
                "This resume data has version \(envelope.ferryResumeData.version); this Ferry reads up to \(Self.currentVersion). Update Ferry."
            )
        }
        self = envelope.ferryResumeData
    }
}
