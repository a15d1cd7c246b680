import FerryModel
import Foundation
import GRDB

/// A row of the `transfer` table: what the journal knows of one transfer.
package struct TransferRecord: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    package static let databaseTableName = "transfer"

    package var id: Int64?
    package var session: String
    package var url: String
    package var state: TransferState
    /// Library folder, relative to the library root (`Downloads`).
    package var folder: String
    /// A name from metadata, used when the response suggests none.
    package var suggestedName: String?
    /// A name chosen by the caller (a song's `Artist - Track`, an episode's `date title`) that
    /// wins over the server's; the extension comes from the response when it has none.
    package var preferredName: String?
    package var taskDescription: String?
    /// The file name the response suggested (Content-Disposition, final URL, Content-Type).
    package var nameHint: String?
    /// The final name inside `folder`. Set just before the part file is moved into the library,
    /// so recovery can finish a move that a crash interrupted.
    package var fileName: String?
    /// Bytes fsynced to the part file.
    package var durableBytes: Int64
    package var totalBytes: Int64?
    /// The `If-Range` validator of the response the bytes came from.
    package var validator: String?
    package var sha256: String?
    package var errorCode: String?
    package var errorMessage: String?
    /// Requests made so far.
    package var attempts: Int
    /// Consecutive failed attempts without new bytes; reset by progress.
    package var failures: Int
    package var retryAt: Date?
    /// A cancelled transfer whose part file is kept for its resume data.
    package var keepsPartFile: Bool
    package var createdAt: Date
    package var updatedAt: Date
    package var completedAt: Date?
    package var kind: TransferKind = .download
    /// Uploads: the request method.
    package var method: String?
    /// Uploads: the file sent, and its size, modification time and inode when the upload was
    /// created, to notice a file that changes or vanishes before the upload completes.
    package var sourcePath: String?
    package var sourceIdentity: String?
    /// Uploads: the multipart field name, when sent as a form.
    package var formField: String?
    package var uploadProtocol: UploadProtocol?
    /// Resumable uploads: the upload resource the server created.
    package var uploadURL: String?
    package var responseStatus: Int?
    /// JSON of the response's headers (sensitive values redacted).
    package var responseHeaders: String?
    package var responseBody: String?
    /// JSON of this transfer's own ``TransferOptions`` (overriding the session's).
    package var options: String?
    /// Not started before this date.
    package var startAfter: Date?
    /// Why a waiting transfer waits, in a few words ("no network").
    package var waitReason: String?
    /// When the transfer last moved a byte or first failed since: the resource timeout counts
    /// from here. Nil while nothing has failed.
    package var waitingSince: Date?
    /// True when it waits for the network (not for a date a server named): it tries again as
    /// soon as the machine's network changes.
    package var waitsForNetwork: Bool = false
    /// A segmented download's ranges, `[[start, durable, end], ...]` (``SegmentPlan``): each range
    /// resumes from its own durable end. Nil for a download over one connection.
    package var segments: String?
    /// JSON of the download's ``TransferMirror``s: other URLs of the same file, and why any was
    /// dropped. Nil without mirrors.
    package var mirrors: String?
    /// The folder the user chose (absolute), instead of a library folder: the part file waits
    /// beside the file (``LibraryFolder/partURL(for:)``) and the file keeps the name it is given.
    package var directory: String?
    /// The file name the user chose (`-o`): used as it is, without an extension added.
    package var outputName: String?
    /// Replace a file of the same name instead of choosing `name (2).ext`.
    package var overwrite = false
    /// The digest the file must have (``Checksum``, as text), given by the user.
    package var checksum: String?
    /// The whole file's digest as the server stated it: `HEADER ALGORITHM=HEX`
    /// (`Repr-Digest sha-256=…`, ``DigestHeaders``).
    package var serverDigest: String?
    /// What the finished file was checked against, comma-separated (`checksum sha-256`,
    /// `Repr-Digest sha-256`).
    package var verifiedBy: String?
    /// ``TransferPriority/rank``: higher starts first.
    package var priority = 0
    /// Its place among queued transfers of its priority (smaller first); nil: its id.
    package var queueRank: Int64?
    /// Removed from the list, kept for a song or an episode that names it (its file is theirs).
    package var hidden = false
    /// The HTTP version its last answer came over (`HTTP/2`, `HTTP/1.1`).
    package var httpVersion: String?
    /// In a cluster: the member holding its lease (as read; the SQLite journal has none).
    package var member: String?
    /// The account that asked for it (a member may pause or cancel only their own); nil for
    /// the daemon's own clients (the CLI, this machine's web app, the library's downloads).
    package var requestedBy: String?

    package init(
        session: String, url: String, folder: String, suggestedName: String? = nil, preferredName: String? = nil,
        taskDescription: String? = nil, now: Date = Date()
    ) {
        self.session = session
        self.url = url
        self.state = .queued
        self.folder = folder
        self.suggestedName = suggestedName
        self.preferredName = preferredName
        self.taskDescription = taskDescription
        self.durableBytes = 0
        self.attempts = 0
        self.failures = 0
        self.keepsPartFile = false
        self.createdAt = now
        self.updatedAt = now
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    /// The id; records read from the journal always have one.
    package var transferId: Int64 { id ?? 0 }

    package var error: TransferErrorInfo? {
        get { errorCode.map { TransferErrorInfo(code: $0, message: errorMessage ?? "") } }
        set {
            errorCode = newValue?.code
            errorMessage = newValue?.message
        }
    }

    /// The mirrors, as ``mirrors`` keeps them.
    package var mirrorList: [TransferMirror] {
        get { mirrors.flatMap { try? JSONDecoder().decode([TransferMirror].self, from: Data($0.utf8)) } ?? [] }
        set { mirrors = newValue.isEmpty ? nil : String(decoding: (try? JSONEncoder().encode(newValue)) ?? Data("[]".utf8), as: UTF8.self) }
    }

    /// Path of the finished file relative to the library root.
    package var relativePath: String? { fileName.map { "\(folder)/\($0)" } }

    /// The finished file's absolute path: in the user's folder, else in the library's.
    package func filePath(in library: LibraryFolder) -> String? {
        guard let fileName else { return nil }
        return directory.map { "\($0)/\(fileName)" } ?? library.absolutePath("\(folder)/\(fileName)")
    }

    /// The digests the finished file must match, with what each came from (`checksum`, a header).
    var expectedDigests: [(source: String, checksum: Checksum)] {
        var expected: [(String, Checksum)] = []
        if let text = checksum, let given = try? Checksum(parsing: text) { expected.append(("checksum", given)) }
        if let text = serverDigest, let space = text.firstIndex(of: " "), let stated = try? Checksum(parsing: String(text[text.index(after: space)...])) {
            expected.append((String(text[..<space]), stated))
        }
        return expected
    }
}
