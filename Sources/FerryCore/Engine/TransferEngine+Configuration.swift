import FerryKit
import Foundation

extension TransferEngine {
    public struct Configuration: Sendable {
        /// Transfers downloading at once; the rest wait in order.
        public var maxConcurrent: Int = 4
        /// Checkpoint after this many new bytes...
        public var checkpointBytes: Int64 = 8 << 20
        /// ...or after this long with any new bytes (slow downloads)...
        public var checkpointMaxInterval: Duration = .seconds(2)
        /// ...but not more often than this.
        public var checkpointInterval: Duration = .milliseconds(100)
        public var retry = RetryPolicy()
        public var redirects = RedirectPolicy()
        /// A segmented download's connection quiet this long gives its range up to another.
        public var segmentStall: Duration = .seconds(5)
        /// No range is split into pieces under this (and a download under twice it uses one connection).
        public var segmentMinimumSplit: Int64 = SegmentPlan.minimumSplit
        /// How often live progress is sent to listeners.
        public var progressInterval: Duration = .milliseconds(250)
        /// How often idle event streams get a keep-alive.
        public var heartbeatInterval: Duration = .seconds(15)
        public var userAgent = "Ferry/\(FerryVersion.current)"
        /// The machine's boot id: while it matches the last daemon's, part files are trusted
        /// beyond their last checkpoint (``PartFileTail``). Nil trusts only checkpoints.
        public var bootID: String? = PartFileTail.currentBoot()

        public init() {}
    }

    /// A request to download URLs into a library folder.
    public struct DownloadRequest: Sendable {
        public var urls: [URL]
        public var session: String
        public var force: Bool
        public var folder: String
        /// A file name from metadata, used when the server suggests none.
        public var suggestedName: String?
        /// A file name that wins over the server's (extension added from the response if missing).
        public var preferredName: String?
        public var taskDescription: String?
        /// Overrides of the session's options for these transfers.
        public var options: TransferOptions?
        /// Other URLs of the same file (with one URL only).
        public var mirrors: [URL]
        /// A folder of the user's (absolute) instead of the library's `folder`; nil: the
        /// session's, if it has one.
        public var directory: String?
        /// Create `directory` when it does not exist.
        public var createDirectory: Bool
        /// The file's exact name (with one URL only).
        public var outputName: String?
        public var overwrite: Bool
        /// The digest the file must have (with one URL only).
        public var checksum: Checksum?
        public var priority: TransferPriority
        /// Added paused: it waits for a resume (aria2's `pause` option).
        public var paused: Bool

        public init(
            urls: [URL], session: String, force: Bool = false, folder: String = "Downloads",
            suggestedName: String? = nil, preferredName: String? = nil, taskDescription: String? = nil,
            options: TransferOptions? = nil, mirrors: [URL] = [], directory: String? = nil, createDirectory: Bool = false,
            outputName: String? = nil, overwrite: Bool = false, checksum: Checksum? = nil, priority: TransferPriority = .normal,
            paused: Bool = false
        ) {
            self.paused = paused
            self.urls = urls
            self.session = session
            self.force = force
            self.folder = folder
            self.suggestedName = suggestedName
            self.preferredName = preferredName
            self.taskDescription = taskDescription
            self.options = options
            self.mirrors = mirrors
            self.directory = directory
            self.createDirectory = createDirectory
            self.outputName = outputName
            self.overwrite = overwrite
            self.checksum = checksum
            self.priority = priority
        }
    }
}
