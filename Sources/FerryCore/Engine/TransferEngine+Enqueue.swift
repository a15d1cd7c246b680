import FerryModel
import Foundation

/// New transfers: downloads and uploads journaled, placed in the queue, handed to the control.
extension TransferEngine {
    /// Session identifiers are short names: letters, digits, `.`, `_`, `-`.
    package static func validateSession(_ session: String) throws(FerryError) {
        guard !session.isEmpty, session.count <= 64,
            session.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") })
        else {
            throw FerryError.invalidRequest(
                "'\(session.prefix(80))' is not a valid session name; use up to 64 letters, digits, '.', '_' or '-'."
            )
        }
    }

    /// When a transfer may run by the network and the hours is its session's or the daemon's to say.
    static func refuseSessionWide(_ options: TransferOptions?) throws(FerryError) {
        guard let options, options.allowsMeteredNetwork != nil || options.discretionary != nil || options.meteredInterfaces != nil else { return }
        throw FerryError.invalidRequest(
            "Metered networks and discretionary hours are set per session or for the daemon (`ferry session set NAME --no-metered`), not per transfer."
        )
    }

    /// Journals new transfers (or finds the ones already asked for) and schedules them.
    /// - Returns: one transfer per URL, in order.
    package func enqueue(_ request: DownloadRequest) async throws -> [Transfer] {
        let records = try await enqueueRecords(request)
        // As a read of the row shows them (through JSON: dates to its precision), decoded once.
        let encodedOptions = records.first?.options
        let shownOptions = TransferRecord.decoded(encodedOptions)?.redacted
        return records.map { record in
            record.options == encodedOptions
                ? record.model(library: library, live: nil, shownOptions: shownOptions) : model(record)
        }
    }

    /// ``enqueue(_:)``, answered with the journal's rows: what was queued, without the models
    /// an answer of ids alone does not need.
    package func enqueueRecords(_ request: DownloadRequest) async throws -> [TransferRecord] {
        var request = request
        try Self.validateSession(request.session)
        // A session's --insecure goes into each transfer made while it is set: shown with it, and
        // kept if the session changes its mind later.
        if request.options?.insecure == nil, try await options(session: request.session).insecure == true {
            request.options = (request.options ?? TransferOptions()).overridden(by: TransferOptions(insecure: true))
        }
        try request.options?.validate()
        try Self.refuseSessionWide(request.options)
        try clients.trust.check(request.options)
        // A .netrc that others can read, or that is malformed, is refused before anything is
        // journaled (it is read again whenever a server asks).
        if let netrc = request.options?.netrcFile { _ = try await BlockingIO.run { () throws(FerryError) in try Netrc.load(path: netrc) } }
        if request.options?.setsHooks == true || request.options?.desktopNotify != nil {
            throw FerryError.invalidRequest("Hooks and notifications are set per session or for the daemon (`ferry session set`), not per transfer.")
        }
        let folder = LibraryFolder.safeFolder(request.folder)
        let mirrors = try Self.mirrors(request)
        let destination = try await destination(request)
        let startAfter = try await startAfter(session: request.session, own: request.options)
        // The request's options, encoded once for all its transfers (500,000 URLs queued with
        // `--at` each carry them: encoding them for each, and decoding them again for the answer,
        // took 6 of the 32 s queueing them took).
        let encodedOptions = TransferRecord.encoded(request.options)
        let now = configuration.now()
        let drafts = request.urls.map { url in
            var draft = TransferRecord(
                session: request.session, url: url.absoluteString, folder: folder,
                suggestedName: request.suggestedName, preferredName: request.preferredName,
                taskDescription: request.taskDescription, now: now
            )
            draft.options = encodedOptions
            draft.startAfter = startAfter
            draft.mirrorList = mirrors
            draft.directory = destination.directory
            draft.outputName = destination.name
            draft.overwrite = request.overwrite
            draft.checksum = request.checksum?.description
            draft.priority = request.priority.rank
            if request.paused { draft.state = .paused }
            draft.requestedBy = request.requestedBy
            return draft
        }
        // One transaction for the lot, and one scheduling pass.
        var records = try await journal.createTransfers(drafts, reuseExisting: !request.force).map(\.record)
        // The same URL already downloaded (a new one is never completed), but its file is gone:
        // "downloaded" means the file is there, so it is downloaded again.
        for (index, record) in records.enumerated() where record.state == .completed && record.kind == .download {
            if let path = record.filePath(in: library), !FileManager.default.fileExists(atPath: path) {
                records[index] = try await journal.createTransfer(drafts[index], reuseExisting: false).record
            }
        }
        await schedule(records)
        return records
    }

    /// The request's mirrors, checked: one URL with them, at most ``maxMirrors``, none the URL
    /// itself (repeats are dropped).
    static func mirrors(_ request: DownloadRequest) throws(FerryError) -> [TransferMirror] {
        guard !request.mirrors.isEmpty else { return [] }
        guard request.urls.count == 1 else {
            throw FerryError.invalidRequest("Mirrors go with one URL: they are other addresses of the same file.")
        }
        guard request.mirrors.count <= maxMirrors else {
            throw FerryError.invalidRequest("At most \(maxMirrors) mirrors per download (\(request.mirrors.count) given).")
        }
        var seen: Set<String> = [request.urls[0].absoluteString]
        return request.mirrors.compactMap { url in seen.insert(url.absoluteString).inserted ? TransferMirror(url: url.absoluteString) : nil }
    }

    /// Where the request's files go, checked now so that errors come at creation: a folder of
    /// the user's (the request's, else the session's), and a name of theirs (with one URL).
    private func destination(_ request: DownloadRequest) async throws -> (directory: String?, name: String?) {
        if request.urls.count > 1 {
            guard request.outputName == nil else { throw FerryError.invalidRequest("A file name goes with one URL.") }
            guard request.checksum == nil else { throw FerryError.invalidRequest("A checksum goes with one URL.") }
        }
        let name = try request.outputName.map { name throws(FerryError) in try LibraryFolder.checkFileName(name) }
        var directory = request.directory ?? request.options?.directory
        if directory == nil { directory = try await options(session: request.session).directory }
        return (try directory.map { path throws(FerryError) in try LibraryFolder.checkDirectory(path, create: request.createDirectory) }, name)
    }

    /// Mirrors of one download, at most (aria2c's `-x` is 16 too).
    static let maxMirrors = 16

    /// Journals an upload of a local file and schedules it. The file is checked now (it must be
    /// a readable regular file) and again while it is sent.
    package func upload(_ request: CreateUploadRequest, session: String) async throws -> Transfer {
        try Self.validateSession(session)
        try request.options?.validate()
        try Self.refuseSessionWide(request.options)
        try clients.trust.check(request.options)
        if let netrc = request.options?.netrcFile { _ = try await BlockingIO.run { () throws(FerryError) in try Netrc.load(path: netrc) } }
        let url = try TransferURL.validate(request.url)
        guard request.file.hasPrefix("/") else {
            throw FerryError.invalidRequest("Give the file's absolute path ('\(request.file.prefix(80))' is relative).")
        }
        let method = request.method?.uppercased()
        guard method == nil || method == "PUT" || method == "POST" else {
            throw FerryError.invalidRequest("Uploads are sent with PUT or POST, not \(request.method!.prefix(20)).")
        }
        let uploadProtocol = request.uploadProtocol ?? .auto
        if let field = request.formField {
            guard !field.isEmpty, field.count <= 100, !field.contains(where: { $0 == "\"" || $0.isNewline }) else {
                throw FerryError.invalidRequest("'\(field.prefix(40))' is not a usable form field name.")
            }
            guard uploadProtocol == .auto || uploadProtocol == .plain else {
                throw FerryError.invalidRequest("A form upload is one plain request; it cannot use the \(uploadProtocol.rawValue) protocol.")
            }
        }
        let (identity, size): (String, Int64)
        do {
            (identity, size) = try UploadSource.identity(of: request.file)
        } catch {
            throw FerryError.invalidRequest(error.message)  // The caller named a file it cannot send.
        }
        var draft = TransferRecord(session: session, url: url.absoluteString, folder: "", taskDescription: request.taskDescription, now: configuration.now())
        draft.kind = .upload
        draft.method = method
        draft.sourcePath = request.file
        draft.sourceIdentity = identity
        draft.formField = request.formField
        // A form is always one plain request: no need to ask the server.
        draft.uploadProtocol = request.formField != nil ? .plain : uploadProtocol
        draft.totalBytes = size
        draft.transferOptions = request.options
        draft.startAfter = try await startAfter(session: session, own: request.options)
        if request.paused == true { draft.state = .paused }
        let (record, _) = try await journal.createTransfer(draft, reuseExisting: false)
        await schedule([record])
        return model(record)
    }

    /// When a new transfer may start: its own date, else its session's, else the daemon's.
    private func startAfter(session: String, own: TransferOptions?) async throws -> Date? {
        if let date = own?.startAfter { return date }
        if let date = try await journal.sessionOptions(session).startAfter { return date }
        return try await journal.daemonOptions().startAfter
    }
}
