import ArgumentParser
import FerryKit
import Foundation

struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Download URLs in the background, showing progress until they finish.",
        discussion: """
            The daemon does the work: Ctrl-C only stops watching (the downloads go on), and \
            `ferry ls` or `ferry wait ID` pick them up again. A URL already queued, running or \
            completed in the same session is not downloaded twice; --force downloads it again.

            Finished files go to the library's Downloads/ folder (or the session's, or --dir), \
            named after the server's Content-Disposition or the URL; an existing name gets \
            " (2)" unless --overwrite. -o names the file (with one URL); --mkdir creates a \
            missing folder. In a folder of yours the unfinished file waits beside the file, \
            hidden (.NAME.ID.ferry-part), and is renamed into place once its length and digests \
            are checked: --checksum (aria2c's syntax: sha-256=HEX, or sha-512, sha-1, md5), and \
            the server's own Repr-Digest, Content-Digest or Digest header when it sends one. A \
            mismatch fails the transfer (checksum_mismatch) and places nothing; `ferry ls --json` \
            says what each file was checked against (verifiedBy).

            -i reads aria2c's input files: one URL a line, its mirrors after a tab, and indented \
            lines below it for that download only (out=NAME or a path under dir=, dir=FOLDER, \
            checksum=sha-256=HEX); # starts a comment. The whole file is read and its lines \
            checked before anything is queued.

            --mirror names another server with the same file (the same length and ETag or \
            Last-Modified date): ranges are fetched from every mirror at once, and a mirror that \
            answers 404 or has a different file is dropped while the download goes on.

            The queue starts higher --priority first, then the oldest (`ferry move` changes it).

            A Metalink (.meta4, or .metalink of version 3), given as a path or an http(s) URL \
            (the daemon fetches it), downloads each \
            file it names, from its http(s) URLs as mirrors (--metalink-location de,fr tries \
            those countries' first), checked against its strongest digest; a name with a folder \
            goes into that folder under the destination, and one that would leave it refuses \
            the whole file.

            Examples:
              ferry get -o ~/isos/debian.iso --checksum sha-256=HEX URL
              ferry get --dir ~/isos --mkdir --overwrite URL1 URL2
              ferry get -i urls.txt --no-wait        (-i - reads standard input)
              ferry get --priority high URL
              ferry get URL --mirror URL2 --mirror URL3
              ferry get debian.meta4 --metalink-location de

            Exit status: 0 when every transfer completed, 1 when one failed or was cancelled, \
            130 after Ctrl-C.
            """
    )

    @Argument(help: "http or https URLs to download, or Metalink files (.meta4, .metalink).")
    var urls: [String] = []

    @Option(name: .long, help: ArgumentHelp("With a Metalink: countries (ISO 3166 codes) whose mirrors are tried first.", valueName: "codes"))
    var metalinkLocation: String?

    @Option(name: [.customShort("i"), .customLong("input-file")], help: ArgumentHelp("Read URLs from this file (- for standard input), one download a line, aria2c's way: mirrors after a tab on the same line, indented out=, dir= and checksum= lines below it.", valueName: "file"))
    var inputFile: String?

    @Option(name: .long, help: "The session the transfers belong to; its settings apply (ferry session set NAME --no-metered: wait off metered networks; --discretionary: only in the cheap hours).")
    var session = "cli"

    @Flag(name: .long, help: "Queue the downloads and return at once.")
    var noWait = false

    @Flag(name: .long, help: "Download again even if the URL was already downloaded in this session.")
    var force = false

    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Where the file goes, a path (with one URL; relative to here). A path ending in / is a folder.", valueName: "path"))
    var outputPath: String?

    @Flag(name: .long, help: "Replace a file of the same name instead of naming the new one 'name (2).ext'.")
    var overwrite = false

    @Flag(name: .long, help: "Create the folder (--dir, or -o's) and its parents when it does not exist.")
    var mkdir = false

    @Option(name: .long, help: ArgumentHelp("The digest the file must have: sha-256=HEX (also sha-512, sha-1, md5; with one URL).", valueName: "algorithm=hex"))
    var checksum: String?

    @Option(name: .long, help: ArgumentHelp("high, normal (the default) or low: higher priorities start first.", valueName: "priority"))
    var priority: TransferPriority?

    @Option(name: .long, help: ArgumentHelp("Another URL of the same file (repeatable; with one URL).", valueName: "url"))
    var mirror: [String] = []

    @Option(name: .long, help: ArgumentHelp("Cookies for these downloads from a cookies.txt file (Netscape format, as browser extensions, curl and wget write it): added to the session's jar (`ferry session cookies`).", valueName: "file"))
    var loadCookies: String?

    @OptionGroup(title: "Transfer options (over the session's; see `ferry session`)") var transfer: TransferOptionFlags

    @OptionGroup(title: "Logins (when a server answers 401; see `ferry credentials`)") var auth: AuthFlags

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard !urls.isEmpty || inputFile != nil else { throw ValidationError("Give at least one URL to download (or -i FILE).") }
        guard urls.isEmpty || inputFile == nil else { throw ValidationError("Give URLs or -i FILE, not both.") }
        guard mirror.isEmpty || urls.count == 1 else {
            throw ValidationError("--mirror goes with one URL: mirrors are other addresses of the same file.")
        }
        guard outputPath == nil || urls.count == 1 else { throw ValidationError("-o goes with one URL; use --dir for several.") }
        guard checksum == nil || urls.count == 1 else { throw ValidationError("--checksum goes with one URL.") }
        guard outputPath == nil || transfer.dir == nil else { throw ValidationError("Give -o or --dir, not both.") }
        if urls.contains(where: { Self.isMetalinkFile($0) || Self.isMetalinkURL($0) }) {
            guard outputPath == nil, checksum == nil, mirror.isEmpty else {
                throw ValidationError("A Metalink names its files, mirrors and digests: -o, --checksum and --mirror do not go with it.")
            }
        } else if metalinkLocation != nil {
            throw ValidationError("--metalink-location goes with a Metalink file (.meta4, .metalink).")
        }
        if let checksum {
            do { _ = try Checksum(parsing: checksum) } catch { throw ValidationError(error.message) }
        }
        _ = try destination()
        _ = try transfer.options()
        try auth.check(inputFromStdin: inputFile == "-")
        if let loadCookies { _ = try CookiesInput.read(loadCookies) }
    }

    /// `--load-cookies`: the file's cookies into the session's jar (checked in ``validate()``).
    /// Its own function: inlined into `run`, it crashed the release build's optimizer (Swift 6.3.1,
    /// "While splitting coroutine GetCommand.run").
    private func loadCookies(into client: DaemonClient) async throws {
        guard let loadCookies else { return }
        let text = try CookiesInput.read(loadCookies)
        _ = try await client.importCookies(text, session: session)
    }

    /// The folder and name -o names: a path ending in / (or an existing folder) is a folder.
    func destination() throws -> (directory: String?, name: String?) {
        guard let outputPath else { return (nil, nil) }
        let path = TransferOptionFlags.absolutePath(outputPath)
        var isFolder: ObjCBool = false
        if outputPath.hasSuffix("/") || (FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue) {
            return (path, nil)
        }
        let url = URL(fileURLWithPath: path)
        return (url.deletingLastPathComponent().path, url.lastPathComponent)
    }

    func run() async throws {
        // Everything is read and checked before anything is queued.
        let requests = try requests()
        let client = try await CLIConnection.connect()
        try await loadCookies(into: client)
        if noWait { return try await queueWithoutWaiting(requests, client: client) }
        var transfers: [Transfer] = []
        var after: Int64?
        for request in requests where !(request.urls ?? []).isEmpty || request.metalink != nil {
            let created = try await client.createTransfers(request)
            after = after ?? created.lastEventSeq
            transfers += created.transfers
        }
        try await TransferFollower.report(transfers, after: after ?? 0, wait: true, json: output.json)
    }

    /// The requests to send: the URLs given, or -i FILE's, with the options and logins.
    /// (Synchronous and apart from `run`: Swift 6.3.1's optimizer crashed splitting a `run` that
    /// held it all, in release builds.)
    private func requests() throws -> [CreateTransfersRequest] {
        let (directory, name) = try destination()
        var options = try transfer.options()
        try auth.apply(to: &options)
        let links = urls.filter(Self.isMetalinkFile)
        let remote = urls.filter(Self.isMetalinkURL)
        let request = CreateTransfersRequest(
            urls: urls.filter { !Self.isMetalinkFile($0) && !Self.isMetalinkURL($0) }, session: session, force: force, options: options, mirrors: mirror.isEmpty ? nil : mirror,
            directory: directory, filename: name, overwrite: overwrite ? true : nil, createDirectory: mkdir ? true : nil,
            checksum: checksum, priority: priority
        )
        let locations = metalinkLocation?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let documents = try links.map { path in
            var document = request
            document.urls = nil
            document.metalink = try Self.readMetalink(path)
            document.metalinkLocations = locations
            return document
        } + remote.map { url in
            var document = request
            document.urls = nil
            document.metalinkURL = url
            document.metalinkLocations = locations
            return document
        }
        return try inputFile.map { path in
            try InputFile(try Self.read(path)).requests(template: request, resolve: TransferOptionFlags.absolutePath)
        } ?? ((request.urls ?? []).isEmpty ? [] : [request]) + documents
    }

    /// A path (not a URL) to a Metalink file that is there: `.meta4` or `.metalink`.
    static func isMetalinkFile(_ argument: String) -> Bool {
        let lower = argument.lowercased()
        return !lower.contains("://") && (lower.hasSuffix(".meta4") || lower.hasSuffix(".metalink"))
            && FileManager.default.fileExists(atPath: TransferOptionFlags.absolutePath(argument))
    }

    /// An http(s) URL whose path ends in `.meta4` or `.metalink`: the daemon fetches the document.
    static func isMetalinkURL(_ argument: String) -> Bool {
        guard let url = URL(string: argument), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else { return false }
        let path = url.path.lowercased()
        return path.hasSuffix(".meta4") || path.hasSuffix(".metalink")
    }

    /// A Metalink file's text (16 MiB at most; the daemon reads it).
    static func readMetalink(_ path: String) throws -> String {
        let url = URL(fileURLWithPath: TransferOptionFlags.absolutePath(path))
        guard let size = try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize, size <= 16 << 20 else {
            throw ValidationError("\(path) is not a Metalink Ferry reads: it cannot be read, or is larger than 16 MiB.")
        }
        guard let text = String(data: try Data(contentsOf: url), encoding: .utf8) else {
            throw ValidationError("\(path) is not UTF-8 text, so it is no Metalink.")
        }
        return text
    }

    /// Queues and says each batch, then forgets it (half a million URLs from -i never sit in
    /// this process's memory). Said as lines, a batch's answer is ids alone; said as JSON, it is
    /// the whole transfers, read and said while the daemon journals the next batch (one after
    /// the other, the two took turns). The batches reach the daemon one at a time, in order.
    private func queueWithoutWaiting(_ requests: [CreateTransfersRequest], client: DaemonClient) async throws {
        let json = output.json
        var saying: Task<Int, Error>?  // The last answer being said; it returns how many are said.
        var said = 0
        if json { Terminal.print("[", terminator: "") }
        for request in requests where !(request.urls ?? []).isEmpty || request.metalink != nil {
            let lines: @Sendable (Int) throws -> (text: String, count: Int)
            do {
                if json {
                    let answer = try await client.createTransfersDecodedLater(request)
                    lines = { before in
                        let transfers = try answer().transfers
                        return (try TransferFollower.lines(transfers, json: true, after: before), transfers.count)
                    }
                } else {
                    let created = try await client.createTransferIDs(request)
                    // A Metalink's transfers are said with the document they came from.
                    let from = request.metalinkURL ?? (request.metalink != nil ? "(Metalink)" : nil)
                    let urls = from.map { Array(repeating: $0, count: created.ids.count) } ?? request.urls ?? []
                    lines = { _ in (TransferFollower.lines(created, urls: urls), created.ids.count) }
                }
            } catch {
                _ = try? await saying?.value  // What was queued before is said.
                throw error
            }
            said = try await saying?.value ?? said
            let before = said
            saying = Task {
                let (text, count) = try lines(before)
                Terminal.print(text, terminator: "")
                return before + count
            }
        }
        said = try await saying?.value ?? said
        if json { Terminal.print(said > 0 ? "\n]" : "]") }
    }

    /// The input file's text (`-`: standard input).
    static func read(_ path: String) throws -> String {
        do {
            let data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: path))
            return String(decoding: data, as: UTF8.self)
        } catch {
            throw ValidationError("Could not read \(path): \(error.localizedDescription)")
        }
    }
}
