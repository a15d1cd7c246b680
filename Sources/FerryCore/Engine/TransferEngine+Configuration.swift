import FerryModel
import Foundation

extension TransferEngine {
    package struct Configuration: Sendable {
        /// Transfers downloading at once; the rest wait in order.
        package var maxConcurrent: Int = 4
        /// Checkpoint after this many new bytes...
        package var checkpointBytes: Int64 = 8 << 20
        /// ...or after this long with any new bytes (slow downloads)...
        package var checkpointMaxInterval: Duration = .seconds(2)
        /// ...but not more often than this.
        package var checkpointInterval: Duration = .milliseconds(100)
        package var retry = RetryPolicy()
        package var redirects = RedirectPolicy()
        /// A segmented download's connection quiet this long gives its range up to another.
        package var segmentStall: Duration = .seconds(5)
        /// No range is split into pieces under this (and a download under twice it uses one connection).
        package var segmentMinimumSplit: Int64 = SegmentPlan.minimumSplit
        /// How often live progress is sent to listeners.
        package var progressInterval: Duration = .milliseconds(250)
        /// How often idle event streams get a keep-alive.
        package var heartbeatInterval: Duration = .seconds(15)
        /// How long events are kept (``EventRetention``); applied at start and every
        /// ``eventPruneInterval``.
        package var eventRetention = EventRetention()
        /// Finished transfers (completed, cancelled) kept in the list as history: a year, at
        /// most 10,000; older ones are removed as `ferry rm --finished` would (files stay).
        package var historyRetention = RetentionLimit(days: 365, count: 10_000)
        package var eventPruneInterval: Duration = .seconds(3600)
        /// The wall clock retention compares against (and new transfers are dated by); the
        /// journal stamps its rows with the same (``SQLiteJournal/open(at:tables:now:)``). Tests
        /// move it ahead to live a year in minutes (``TestClockFile``).
        package var now: @Sendable () -> Date = { Date() }
        /// NetworkManager's `Metered` (NMMetered), asked when some session holds its transfers
        /// off metered networks; nil where NetworkManager does not run. The daemon asks over
        /// D-Bus; the engine cannot start programs.
        package var networkManagerMetered: @Sendable () async -> UInt32? = { nil }
        /// How often that is asked again while some session cares: NetworkManager can change it
        /// without any route changing (the user marks a connection metered).
        package var meteredRecheckInterval: Duration = .seconds(15)
        package var userAgent = "Ferry/\(FerryVersion.current)"
        /// The machine's boot id: while it matches the last daemon's, part files are trusted
        /// beyond their last checkpoint (``PartFileTail``). Nil trusts only checkpoints.
        package var bootID: String? = PartFileTail.currentBoot()

        package init() {}
    }

    /// A request to download URLs into a library folder.
    package struct DownloadRequest: Sendable {
        package var urls: [URL]
        package var session: String
        package var force: Bool
        package var folder: String
        /// A file name from metadata, used when the server suggests none.
        package var suggestedName: String?
        /// A file name that wins over the server's (extension added from the response if missing).
        package var preferredName: String?
        package var taskDescription: String?
        /// Overrides of the session's options for these transfers.
        package var options: TransferOptions?
        /// Other URLs of the same file (with one URL only).
        package var mirrors: [URL]
        /// A folder of the user's (absolute) instead of the library's `folder`; nil: the
        /// session's, if it has one.
        package var directory: String?
        /// Create `directory` when it does not exist.
        package var createDirectory: Bool
        /// The file's exact name (with one URL only).
        package var outputName: String?
        package var overwrite: Bool
        /// The digest the file must have (with one URL only).
        package var checksum: Checksum?
        package var priority: TransferPriority
        /// Added paused: it waits for a resume (aria2's `pause` option).
        package var paused: Bool
        /// The account that asks (``TransferRecord/requestedBy``).
        package var requestedBy: String?

        package init(
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
