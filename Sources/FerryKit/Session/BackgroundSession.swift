import AsyncHTTPClient
import Foundation
import Synchronization

/// A background download session: what `URLSessionConfiguration.background(withIdentifier:)`
/// gives an iOS app, for a Swift program on Linux.
///
/// The Ferry daemon does the downloading, so tasks go on after your program exits, crashes or
/// the machine reboots. The next run of the program makes a session with the same identifier and
/// finds its tasks (``allTasks()``) and every event it missed (``events``, ``missedEvents()``),
/// which it confirms with ``acknowledge(through:)``.
///
/// ```swift
/// let session = try await BackgroundSession(identifier: "com.example.fetcher")
/// let task = try await session.downloadTask(with: url, taskDescription: "Episode 12")
/// for try await event in session.events where event.taskIdentifier == task.taskIdentifier {
///     if case .didFinish(let location, _) = event.kind { print(location.path); break }
/// }
/// ```
///
/// A session object holds no daemon resources: dropping it stops nothing. It is `Sendable`;
/// share one per identifier within a program.
public final class BackgroundSession: Sendable {
    /// The session's name, as the daemon knows it: up to 64 letters, digits, `.`, `_` or `-`.
    /// Tasks and events belong to it; other sessions never see them.
    public let identifier: String
    /// Where the daemon is found and how it is reached.
    public let configuration: Configuration

    let connector: DaemonConnector
    let state = Mutex(State())

    struct State {
        /// The daemon last connected to, and the `daemon.json` that named it.
        var daemon: (info: DaemonInfo, client: DaemonClient)?
        /// The newest journaled event this object has delivered (nil: none yet, so the daemon
        /// starts after the session's last acknowledged event).
        var cursor: Int64?
        /// Bumped by each new consumer of events; older consumers end.
        var consumer = 0
    }

    /// Connects to the local daemon, starting it first when it is not running and
    /// `configuration.launcher` allows.
    /// - Parameters:
    ///   - identifier: the session's name; use the same one in every run of your program.
    ///   - configuration: state folder, daemon launcher and HTTP client; the defaults find the
    ///     daemon of the current user (or of `FERRY_HOME`).
    /// - Throws: ``FerryError`` `invalid_request` for a bad identifier, `daemon_unreachable`
    ///   when no daemon answers and none may be started, `daemon_start_failed` when starting one
    ///   failed.
    public init(identifier: String, configuration: Configuration = Configuration()) async throws {
        try Self.validate(identifier)
        self.identifier = identifier
        self.configuration = configuration
        connector = DaemonConnector(paths: configuration.paths, launcher: configuration.launcher, httpClient: configuration.httpClient)
        let client = try await client()
        // Says this session's program acknowledges its events (acknowledging never goes back):
        // the daemon keeps them for it up to the documented limit, not the CLI's week, even if
        // it quits before any event and comes back later. (Not fatal: at worst the window.)
        try? await client.acknowledge(session: identifier, through: 0)
        if let launch = configuration.launchOnEvents {
            let options = TransferOptions(launch: [launch.executable] + launch.arguments)
            _ = try await client.updateSessionConfiguration(identifier, TransferOptionsUpdate(set: options))
        }
    }

    // MARK: Tasks

    /// Starts downloading `url` in this session.
    ///
    /// Every call makes a new task, like `URLSession`, even when the session already downloads
    /// or downloaded the same URL. Unlike `URLSession`, the task does not wait for
    /// ``DownloadTask/resume()``: the daemon starts it as soon as a download slot is free.
    /// - Parameters:
    ///   - url: an `http` or `https` URL.
    ///   - taskDescription: a label kept with the task (``DownloadTask/taskDescription``), for
    ///     example to recognise it in a later run.
    /// - Throws: ``FerryError`` `invalid_url` or `unsupported_scheme` for a URL the daemon will
    ///   not fetch; `daemon_unreachable` when the daemon cannot be reached.
    public func downloadTask(with url: URL, taskDescription: String? = nil) async throws -> DownloadTask {
        let request = CreateTransfersRequest(urls: [url.absoluteString], session: identifier, force: true, taskDescription: taskDescription)
        return try task(from: await withDaemon { try await $0.createTransfers(request) })
    }

    /// Starts downloading `url` into a file of your choosing: the daemon places the finished file
    /// at `destination` (its folder must exist; an existing file there is replaced only with
    /// `overwrite`, else the new one is `name (2).ext`), after checking its length and, when
    /// given, its `checksum`. Unlike iOS, there is no temporary file to move in a delegate call:
    /// ``DownloadEvent/Kind/didFinish(location:sha256:)`` names the file where it is.
    /// - Parameters:
    ///   - url: an `http` or `https` URL.
    ///   - destination: a file URL; its folder must exist and be writable.
    ///   - overwrite: replace a file already at `destination`.
    ///   - checksum: the digest the file must have; a mismatch fails the task with
    ///     `checksum_mismatch` and places nothing.
    ///   - taskDescription: a label kept with the task.
    /// - Throws: ``FerryError`` `invalid_request` for a destination that is not a writable folder's
    ///   file, before anything is queued.
    public func downloadTask(
        with url: URL, destination: URL, overwrite: Bool = false, checksum: Checksum? = nil, taskDescription: String? = nil
    ) async throws -> DownloadTask {
        let request = CreateTransfersRequest(
            urls: [url.absoluteString], session: identifier, force: true, taskDescription: taskDescription,
            directory: destination.deletingLastPathComponent().standardizedFileURL.path, filename: destination.lastPathComponent,
            overwrite: overwrite ? true : nil, checksum: checksum?.description
        )
        return try task(from: await withDaemon { try await $0.createTransfers(request) })
    }

    /// Uploads the file at `fileURL` to `url` in this session, the analogue of
    /// `URLSession.uploadTask(with:fromFile:)` in a background session: the daemon reads the
    /// file as it sends it, retries, resumes where the server supports it (tus, or the IETF
    /// resumable-upload protocol), and keeps the server's answer in
    /// ``DownloadTask/transfer``'s ``Transfer/response``. The task is a ``DownloadTask`` whose
    /// transfer has ``Transfer/kind`` `.upload`; its events are the same.
    /// - Parameters:
    ///   - url: where to send the file (http or https).
    ///   - fileURL: a local file; it must not change until the upload completes.
    ///   - method: `PUT` (default) or `POST`.
    ///   - formField: send as `multipart/form-data` with the file in this field.
    ///   - options: overrides of the session's options (headers, limits) for this upload.
    /// - Throws: ``FerryError`` `invalid_request` or `file_system` when the daemon refuses it.
    public func uploadTask(
        with url: URL, fromFile fileURL: URL, method: String? = nil, formField: String? = nil,
        taskDescription: String? = nil, options: TransferOptions? = nil
    ) async throws -> DownloadTask {
        let request = CreateUploadRequest(
            file: fileURL.path, url: url.absoluteString, method: method, formField: formField, session: identifier,
            taskDescription: taskDescription, options: options
        )
        return try task(from: await withDaemon { try await $0.upload(request) })
    }

    // MARK: Options

    /// The session's stored options (headers, timeouts, limits), sensitive header values
    /// redacted: the analogue of a `URLSessionConfiguration`'s settings, kept by the daemon.
    public func transferOptions() async throws -> TransferOptions {
        try await withDaemon { try await $0.sessionConfiguration(identifier) }.options
    }

    /// Changes the session's options for its queued and future transfers (bandwidth limits
    /// apply to running ones at once).
    /// - Returns: the options now in force, sensitive header values redacted.
    @discardableResult
    public func updateTransferOptions(_ update: TransferOptionsUpdate) async throws -> TransferOptions {
        try await withDaemon { try await $0.updateSessionConfiguration(identifier, update) }.options
    }

    /// Continues a download from resume data that ``DownloadTask/cancelByProducingResumeData()``
    /// produced, in this run of the program or an earlier one, from the bytes still on disk.
    ///
    /// The task keeps the ``DownloadTask/taskIdentifier`` it had. If it is already running or
    /// completed, this returns it as it is.
    /// - Parameter resumeData: the blob, as ``DownloadTask/cancelByProducingResumeData()`` gave it.
    /// - Throws: ``FerryError`` `resume_data_stale` when the daemon no longer has the partial
    ///   file (the task was cancelled without resume data, or removed): start over with
    ///   ``downloadTask(with:taskDescription:)``; if you no longer have the URL, the blob
    ///   holds it: `URL(string: try ResumeData(blob: data).url)`. `resume_data_invalid` when the
    ///   data is not Ferry resume data, or belongs to another session.
    public func downloadTask(withResumeData resumeData: Data) async throws -> DownloadTask {
        let decoded = try ResumeData(blob: resumeData)
        guard decoded.session == identifier else {
            throw FerryError(
                .resumeDataInvalid,
                "This resume data belongs to the session '\(decoded.session)'; hand it to a BackgroundSession with that identifier."
            )
        }
        let request = CreateTransfersRequest(resumeData: resumeData.base64EncodedString(), session: identifier)
        return try task(from: await withDaemon { try await $0.createTransfers(request) })
    }

    /// Every task of the session, in the order they were created: running and waiting ones, and
    /// also completed, failed and cancelled ones, including those an earlier run of the
    /// program created. (iOS lists only unfinished tasks; filter on ``DownloadTask/state`` for
    /// that.)
    public func allTasks() async throws -> [DownloadTask] {
        try await withDaemon { try await $0.transfers(session: identifier) }.transfers.map { DownloadTask($0, session: self) }
    }

    /// The session's task with this identifier, or nil when there is none (or it belongs to
    /// another session). Use it to look up the task an event is about.
    /// - Parameter taskIdentifier: a ``DownloadTask/taskIdentifier`` or
    ///   ``DownloadEvent/taskIdentifier``.
    public func task(withIdentifier taskIdentifier: Int64) async throws -> DownloadTask? {
        do {
            let transfer = try await withDaemon { try await $0.transfer(taskIdentifier) }
            return transfer.session == identifier ? DownloadTask(transfer, session: self) : nil
        } catch let error as FerryError where error.code == .notFound {
            return nil
        }
    }

    // MARK: Events

    /// Confirms that every event of the session up to and including `seq` has been handled:
    /// the daemon forgets them, and later sessions with this identifier (the next runs of your
    /// program) no longer receive them. The analogue of calling the completion handler that
    /// iOS passes to `application(_:handleEventsForBackgroundURLSession:completionHandler:)`.
    ///
    /// Acknowledge only what you have handled, and in order: events are delivered oldest first,
    /// so acknowledging an event's ``DownloadEvent/seq`` confirms every one before it too.
    /// Acknowledging never goes backwards.
    /// - Parameter seq: the ``DownloadEvent/seq`` of the newest event handled.
    public func acknowledge(through seq: Int64) async throws {
        try await withDaemon { try await $0.acknowledge(session: identifier, through: seq) }
    }

    // MARK: Plumbing

    /// A client for the running daemon: the cached one while `daemon.json` still names the same
    /// live daemon, else a new connection (which may start the daemon). A daemon restart is
    /// therefore picked up by the next call.
    func client() async throws -> DaemonClient {
        let info = currentDaemonInfo()
        if let info, let cached = state.withLock({ $0.daemon }), cached.info == info, ChildProcess.isAlive(info.pid) {
            return cached.client
        }
        let client = try await connector.connect()
        if let info = currentDaemonInfo(), info.url == client.baseURL {
            state.withLock { $0.daemon = (info, client) }
        }
        return client
    }

    /// Runs `body` with a client for the daemon. When the daemon does not answer, the next call
    /// looks for it afresh (it may have restarted elsewhere).
    package func withDaemon<Result: Sendable>(_ body: (DaemonClient) async throws -> Result) async throws -> Result {
        let client = try await client()
        do {
            return try await body(client)
        } catch let error as FerryError where error.code == .daemonUnreachable {
            forgetDaemon()
            throw error
        }
    }

    func forgetDaemon() {
        state.withLock { $0.daemon = nil }
    }

    private func currentDaemonInfo() -> DaemonInfo? {
        FileManager.default.contents(atPath: configuration.paths.daemonInfo.path)
            .flatMap { try? FerryJSON.decoder().decode(DaemonInfo.self, from: $0) }
    }

    private func task(from list: TransferList) throws -> DownloadTask {
        guard let transfer = list.transfers.first else {
            throw FerryError(.badResponse, "The daemon created no transfer.")
        }
        return DownloadTask(transfer, session: self)
    }

    /// The daemon's rule for session names, checked here so a bad one fails at once.
    static func validate(_ identifier: String) throws(FerryError) {
        guard !identifier.isEmpty, identifier.count <= 64,
            identifier.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") })
        else {
            throw FerryError.invalidRequest(
                "'\(identifier.prefix(80))' is not a valid session identifier; use up to 64 letters, digits, '.', '_' or '-'."
            )
        }
    }
}

extension BackgroundSession {
    /// How a session finds and reaches the daemon: the analogue of `URLSessionConfiguration`.
    public struct Configuration: Sendable {
        /// The library and state folders; the token and `daemon.json` are read from
        /// `paths.state`. Default: ``FerryPaths/resolve(environment:)`` (`FERRY_HOME`, else XDG).
        public var paths: FerryPaths
        /// How to start the daemon when none is running; nil never starts one (the session then
        /// fails with `daemon_unreachable`, and ``BackgroundSession/events`` waits for a daemon).
        /// Default: ``DaemonLauncher/locate(environment:)`` (`FERRY_BIN`, else `ferry` on the
        /// `PATH`). The daemon it starts takes its folders from the launcher's environment, so
        /// keep that consistent with `paths`.
        public var launcher: DaemonLauncher?
        /// The HTTP client for talking to the daemon. Default: `HTTPClient.shared`.
        public var httpClient: HTTPClient
        /// How long ``BackgroundSession/missedEvents()`` waits for the next bytes of the daemon's
        /// replay before it fails with `daemon_unreachable` (a daemon that stopped answering
        /// without closing the connection). Default: 30 seconds.
        public var replayStallLimit: Duration = .seconds(30)
        /// A program the daemon starts when one of the session's tasks completes or fails while
        /// no run of your program listens to the session (``BackgroundSession/events``): as iOS
        /// relaunches an app for its background session. It starts once per batch of such
        /// events, with `FERRY_SESSION` set to the identifier; it should read
        /// ``BackgroundSession/missedEvents()`` and acknowledge them. Its output goes to the
        /// daemon's log. Registered when the session is made; nil leaves the registration as it is.
        public var launchOnEvents: LaunchCommand?

        /// A configuration; the defaults find (and may start) the current user's daemon.
        /// - Parameters:
        ///   - paths: the state folder to find the daemon in.
        ///   - launcher: how to start the daemon if needed; nil to never start one.
        ///   - httpClient: the client for every request to the daemon.
        public init(paths: FerryPaths = .resolve(), launcher: DaemonLauncher? = .locate(), httpClient: HTTPClient = .shared) {
            self.paths = paths
            self.launcher = launcher
            self.httpClient = httpClient
        }
    }

    /// A program and its arguments, for ``Configuration/launchOnEvents``.
    public struct LaunchCommand: Sendable, Hashable {
        /// The program's absolute path.
        public var executable: String
        public var arguments: [String]

        /// - Parameters:
        ///   - executable: an absolute path (`CommandLine.arguments[0]` may be relative: resolve it).
        ///   - arguments: what it is started with.
        public init(executable: String, arguments: [String] = []) {
            self.executable = executable
            self.arguments = arguments
        }

        /// This very program, with these arguments.
        public static func thisProgram(arguments: [String] = []) -> LaunchCommand {
            LaunchCommand(executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path, arguments: arguments)
        }
    }
}
