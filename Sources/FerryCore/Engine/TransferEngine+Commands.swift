import AsyncHTTPClient
import FerryModel
import Foundation

/// What clients ask of transfers already there: options, order, pause, resume, cancel, remove,
/// resume data; each a command the control decides on.
extension TransferEngine {
    /// A session's options (`nil`: the daemon's), as stored.
    package nonisolated func options(session: String?) async throws -> TransferOptions {
        if let session {
            try Self.validateSession(session)
            return try await journal.sessionOptions(session)
        }
        return try await journal.daemonOptions()
    }

    /// Changes a session's options (`nil`: the daemon's) and applies them to what is running
    /// and queued.
    package func updateOptions(session: String?, _ update: TransferOptionsUpdate) async throws -> TransferOptions {
        if let session { try Self.validateSession(session) }
        if session != nil, update.set?.meteredInterfaces != nil {
            throw FerryError.invalidRequest("Metered interfaces are the daemon's (`ferry config set --metered-interfaces`), not a session's.")
        }
        if session == nil, update.set?.insecure != nil {
            throw FerryError.invalidRequest(
                "Certificates are always checked daemon-wide: --insecure is for one transfer (`ferry get --insecure`) or a session (`ferry session set NAME --insecure`)."
            )
        }
        if session == nil, update.set?.discretionary != nil {
            throw FerryError.invalidRequest("discretionary is a session's (`ferry session set NAME --discretionary`): the daemon's schedule says when is cheap.")
        }
        if let directory = update.set?.directory { _ = try LibraryFolder.checkDirectory(directory, create: false) }
        try clients.trust.check(update.set)
        if let program = update.set?.launch?.first, !FileManager.default.isExecutableFile(atPath: program) {
            throw FerryError.invalidRequest("\(program) is not a program this daemon can run.")
        }
        let updated: TransferOptions
        if let session {
            updated = try await journal.updateSessionOptions(session) { try update.applied(to: $0) }
        } else {
            updated = try await journal.updateDaemonOptions { try update.applied(to: $0) }
        }
        await configurationChanged(session: session, options: updated)
        return updated
    }

    /// A new priority, or a place at the head or tail of the queue.
    package func update(_ id: Int64, _ update: TransferUpdate) async throws -> Transfer {
        if let label = update.taskDescription {
            guard label.utf8.count <= 1000 else { throw FerryError.invalidRequest("A task description has at most 1,000 bytes.") }
            let (record, _) = try await journal.update(id: id) { (record: inout TransferRecord) -> TransferEvent? in
                record.taskDescription = label.isEmpty ? nil : label
                return nil
            }
            if update.priority == nil, update.position == nil { return model(record) }
        }
        return try await command(.reorder(id, priority: update.priority?.rank, position: update.position), id)
    }

    /// Changes a transfer's own options (not once it has ended). One running takes a new rate
    /// limit at once when it has one already; any other change starts it again, from its
    /// durable bytes.
    package func updateOptions(_ id: Int64, _ update: TransferOptionsUpdate) async throws -> Transfer {
        let (record, before, _) = try await journal.update(id: id) { (record: inout TransferRecord) -> (TransferOptions, TransferEvent?) in
            guard !record.state.isFinal else {
                throw FerryError.invalidState("Transfer \(id) is \(record.state.rawValue): its options no longer matter.")
            }
            let before = record.transferOptions ?? TransferOptions()
            try Self.refuseSessionWide(update.set)
            record.transferOptions = try update.applied(to: before)
            return (before, nil)
        }
        let after = record.transferOptions ?? TransferOptions()
        guard record.state == .running, after != before else { return model(record) }
        var others = after
        others.bytesPerSecond = before.bytesPerSecond
        if others == before, bandwidth.setOwnLimit(id, bytesPerSecond: after.bytesPerSecond) { return model(record) }
        return try await command(.restart(id), id)
    }

    /// The transfers waiting their turn (queued, waiting for a retry or the network, paused), of
    /// `kind` or all, in the order they will start.
    package func waitingOrder(kind: TransferKind? = nil) async throws -> [TransferRecord] {
        let records = try await journal.transfers(states: [.queued, .waiting, .paused]).filter { kind == nil || $0.kind == kind }
        let places = Dictionary(uniqueKeysWithValues: records.map { ($0.transferId, $0) })
        return QueuePlacement.sorted(records.map(QueuePlacement.Place.init)).compactMap { places[$0.id] }
    }

    /// Puts a waiting transfer at a place of ``waitingOrder(kind:)`` (the head is 0; beyond
    /// either end, that end), moving those ahead of it as needed.
    /// - Parameter place: the place asked for, from the transfer's place now and the order's length.
    /// - Returns: its place now; `nil` when it is not waiting its turn.
    package func place(_ id: Int64, kind: TransferKind? = nil, at place: (_ current: Int, _ count: Int) throws -> Int) async throws -> Int? {
        let order = try await waitingOrder(kind: kind)
        guard let current = order.firstIndex(where: { $0.transferId == id }) else { return nil }
        let index = min(max(0, try place(current, order.count)), order.count - 1)
        for change in QueuePlacement.moves(order.map(QueuePlacement.Place.init), moving: id, to: index) {
            _ = try await command(.place(change.id, priority: change.priority, rank: change.rank), change.id)
        }
        return index
    }

    /// Pauses every queued, running and waiting transfer (of `session`, else of every session).
    /// - Returns: the transfers paused.
    package func pauseAll(session: String?) async throws -> [Transfer] {
        try await forEach(session: session, in: [.queued, .running, .waiting]) { try await self.pause($0) }
    }

    /// Resumes every paused transfer (of `session`, else of every session), one after the other
    /// in their order in the queue, so the first to start are those at its head.
    /// - Returns: the transfers resumed.
    package func resumeAll(session: String?) async throws -> [Transfer] {
        if let session { try Self.validateSession(session) }
        var done: [Transfer] = []
        for record in try await waitingOrder() where record.state == .paused && (session == nil || record.session == session) {
            do {
                done.append(try await resume(record.transferId))
            } catch let error as FerryError where error.code == .invalidState || error.code == .notFound {
                continue  // It moved on meanwhile.
            }
        }
        return done.sorted { $0.id < $1.id }
    }

    /// One command for each transfer in `states`, a few dozen at once (a running one waits for
    /// its worker's last checkpoint); one that moved on meanwhile is left out.
    private func forEach(
        session: String?, in states: Set<TransferState>, _ command: @escaping @Sendable (Int64) async throws -> Transfer
    ) async throws -> [Transfer] {
        if let session { try Self.validateSession(session) }
        let ids = try await journal.transfers(session: session, states: states).map(\.transferId)
        var done: [Transfer] = []
        for chunk in stride(from: 0, to: ids.count, by: 64).map({ ids[$0..<min($0 + 64, ids.count)] }) {
            try await withThrowingTaskGroup(of: Transfer?.self) { group in
                for id in chunk {
                    group.addTask {
                        do {
                            return try await command(id)
                        } catch let error as FerryError where error.code == .invalidState || error.code == .notFound {
                            return nil
                        }
                    }
                }
                for try await transfer in group { if let transfer { done.append(transfer) } }
            }
        }
        return done.sorted { $0.id < $1.id }
    }

    package func pause(_ id: Int64) async throws -> Transfer {
        try await command(.pause(id), id)
    }

    /// Resumes a paused or failed transfer (it joins the queue), or retries a waiting one now.
    package func resume(_ id: Int64) async throws -> Transfer {
        try await command(.resume(id), id)
    }

    /// Resumes a transfer to start no earlier than `date` (its place in the queue waits).
    package func resume(_ id: Int64, startAfter date: Date) async throws -> Transfer {
        try await command(.resumeAfter(id, date), id)
    }

    /// Stops a transfer for good and deletes its part file, unless `keepingResumeData`, in which
    /// case the part file stays for ``resumeData(for:)`` and ``resume(with:)``.
    package func cancel(_ id: Int64, keepingResumeData: Bool = false) async throws -> Transfer {
        try await command(.cancel(id, keepingPartFile: keepingResumeData), id)
    }

    /// Forgets a transfer (cancelling it first if needed). With `deleteFile`, a completed
    /// transfer's file is deleted too.
    package func remove(_ id: Int64, deleteFile: Bool) async throws {
        guard let record = try await journal.transfer(id: id) else { throw FerryError.notFound(transfer: id) }
        try await journaledCommand(.remove(id), id)
        if deleteFile, record.state == .completed, let path = record.filePath(in: library) {
            let url = URL(fileURLWithPath: path)
            // A file in the user's own folder is the one this transfer placed there.
            if record.directory != nil || library.contains(url) { try? FileManager.default.removeItem(at: url) }
        }
    }

    /// Forgets every completed and cancelled transfer (of `session`, else of all): the history.
    /// Files stay; a cancelled transfer's part file kept for resume data goes. Failed ones stay:
    /// they can be resumed.
    /// - Returns: the ids forgotten.
    package func removeFinished(session: String?) async throws -> [Int64] {
        if let session { try Self.validateSession(session) }
        let kept = try await journal.transfers(session: session, states: [.cancelled]).filter(\.keepsPartFile)
        let removed = try await journal.removeFinished(session: session)
        for record in kept { try? FileManager.default.removeItem(at: library.partURL(for: record)) }
        return removed
    }

    /// Continues a paused, failed or waiting transfer from a new URL of the same file (a signed
    /// link that expired): the bytes on disk are kept if the new URL's answer has the same
    /// validator and length (`If-Range`), else it starts over and says why.
    package func resume(_ id: Int64, url: URL) async throws -> Transfer {
        guard let record = try await journal.transfer(id: id) else { throw FerryError.notFound(transfer: id) }
        guard record.kind == .download else { throw FerryError.invalidState("Transfer \(id) is an upload; its URL stays.") }
        guard [.paused, .failed, .waiting, .queued].contains(record.state) else {
            throw FerryError.invalidState("Transfer \(id) is \(record.state.rawValue); pause it before giving it a new URL.")
        }
        try await store.record(.url(url.absoluteString), of: id)
        return try await resume(id)
    }

    /// Ends a session for good (a FerryKit program uninstalled): its unfinished transfers are
    /// cancelled, then its events, acknowledgement and options go. Finished transfers stay.
    package func forgetSession(_ session: String) async throws -> ForgottenSession {
        try Self.validateSession(session)
        let unfinished = try await journal.transfers(session: session, states: [.queued, .running, .waiting, .paused, .failed])
        for record in unfinished { _ = try? await cancel(record.transferId) }
        let deleted = try await journal.forgetSession(session)
        return ForgottenSession(name: session, eventsDeleted: deleted, cancelled: unfinished.map(\.transferId))
    }

    // MARK: Cookies

    /// A session's cookie jar, expired cookies left out.
    package nonisolated func cookies(session: String) async throws -> [Cookie] {
        try Self.validateSession(session)
        let now = configuration.now()
        return try await journal.cookies(session: session).filter { $0.expires.map { $0 > now } ?? true }
    }

    /// Puts cookies (a cookies.txt's: `--load-cookies`, `ferry session cookies import`) into a
    /// session's jar, each replacing the one of the same name, domain and path.
    /// - Returns: the jar after.
    package nonisolated func importCookies(_ cookies: [Cookie], session: String) async throws -> [Cookie] {
        try Self.validateSession(session)
        guard cookies.count <= CookieJar.maxCookies else {
            throw FerryError.invalidRequest("At most \(CookieJar.maxCookies) cookies go in a session's jar (\(cookies.count) given).")
        }
        return try await journal.updateCookies(session: session) { current in
            var jar = CookieJar(current)
            for cookie in cookies { jar.store(cookie) }
            return jar.cookies
        }
    }

    /// Logs a session in to a site: POSTs the form to `url` and follows the redirects, keeping
    /// every cookie the hops set in the session's jar; the form (a password) is sent, never kept.
    /// - Returns: the last hop's status and URL, and the jar after.
    package nonisolated func logIn(session: String, url: URL, form: [(name: String, value: String)]) async throws -> SessionLogin {
        try Self.validateSession(session)
        let settings = try await sessionSettings(session)
        let body = form.map { Self.formEncode($0.name) + "=" + Self.formEncode($0.value) }.joined(separator: "&")
        let response: HTTPClientResponse, finalURL: URL
        do {
            (response, finalURL) = try await worker.fetcher.get(
                url, headers: [], extra: settings.headers, headTimeout: settings.headTimeout ?? .seconds(60), options: settings.merged,
                session: session, form: body
            )
        } catch let error as FerryError {
            throw error
        } catch {
            // The site cannot be reached, or refused the connection: said as a transfer's failure is.
            throw AttemptFailure(error, url: url).error
        }
        _ = try? await response.body.collect(upTo: 1 << 20)
        return SessionLogin(
            session: session, status: Int(response.status.code), url: finalURL.absoluteString,
            cookies: try await cookies(session: session).map(\.redacted)
        )
    }

    /// What a session's requests are made with: the daemon's options under the session's.
    private nonisolated func sessionSettings(_ session: String) async throws -> TransferSettings {
        TransferSettings(daemon: try await journal.daemonOptions(), session: try await journal.sessionOptions(session), sessionName: session)
    }

    /// A small document a download is described by (a Metalink), fetched as the session's
    /// downloads are (its proxy, certificates, cookies and headers).
    /// - Throws: what a transfer's attempt would fail with; `http_status` for an answer that is
    ///   not 2xx; `invalid_request` for one larger than `maximumBytes`.
    package nonisolated func fetchDocument(_ url: URL, session: String, maximumBytes: Int) async throws -> Data {
        try Self.validateSession(session)
        let settings = try await sessionSettings(session)
        do {
            let (response, finalURL) = try await worker.fetcher.get(
                url, headers: [], extra: settings.headers, headTimeout: settings.headTimeout ?? .seconds(60), options: settings.merged,
                session: session
            )
            guard (200..<300).contains(Int(response.status.code)) else {
                throw FerryError(.httpStatus, "\(finalURL.absoluteString) answered \(response.status.code) \(response.status.reasonPhrase).")
            }
            if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > maximumBytes {
                throw FerryError.invalidRequest("\(url.absoluteString) is \(length) bytes, more than the \(maximumBytes) a Metalink may have.")
            }
            let body = try await response.body.collect(upTo: maximumBytes + 1)
            guard body.readableBytes <= maximumBytes else {
                throw FerryError.invalidRequest("\(url.absoluteString) is more than the \(maximumBytes) bytes a Metalink may have.")
            }
            return Data(body.readableBytesView)
        } catch let error as FerryError {
            throw error
        } catch {
            throw AttemptFailure(error, url: url).error
        }
    }

    /// `application/x-www-form-urlencoded`: letters, digits and `*-._` as they are, spaces as
    /// `+`, the rest percent-encoded.
    static func formEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "): out += "+"
            default: out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// Empties a session's jar. - Returns: how many cookies it held.
    package nonisolated func clearCookies(session: String) async throws -> Int {
        try Self.validateSession(session)
        let count = try await journal.cookies(session: session).count
        try await journal.updateCookies(session: session) { _ in [] }
        return count
    }

    /// The resume data of a transfer that has bytes on disk.
    package func resumeData(for id: Int64) async throws -> ResumeData {
        guard let record = try await journal.transfer(id: id) else { throw FerryError.notFound(transfer: id) }
        if record.state == .cancelled, !record.keepsPartFile {
            throw FerryError(.resumeDataStale, "Transfer \(id) was cancelled and its partial file deleted; start it again.")
        }
        guard record.state != .completed else {
            throw FerryError.invalidState("Transfer \(id) is completed; there is nothing to resume.")
        }
        // An upload goes on only at a resource the server made for it (tus or IETF).
        if record.kind == .upload, record.uploadURL == nil {
            throw FerryError.invalidState("The server of upload \(id) took no resumable upload; it can only start over.")
        }
        return ResumeData(
            transferId: id, session: record.session, url: record.url, durableBytes: record.durableBytes,
            totalBytes: record.totalBytes, validator: record.validator
        )
    }

    /// Continues the transfer that `resumeData` came from, from the bytes still on disk.
    /// - Throws: `resume_data_stale` when the daemon no longer has the part file or the
    ///   transfer; `resume_data_invalid` when it belongs to another session or URL.
    package func resume(with resumeData: ResumeData, session: String) async throws -> Transfer {
        let id = resumeData.transferId
        guard let record = try await journal.transfer(id: id) else {
            throw FerryError(.resumeDataStale, "The daemon no longer knows transfer \(id); start the download again.")
        }
        guard record.session == session, record.url == resumeData.url else {
            throw FerryError(.resumeDataInvalid, "This resume data belongs to another session or URL.")
        }
        if record.state == .completed || record.state.isActive { return model(record) }
        if record.kind == .upload {
            // The bytes that count are the server's (asked again on resume) and the file here.
            guard !(record.state == .cancelled && !record.keepsPartFile), let source = record.sourcePath,
                FileManager.default.fileExists(atPath: source)
            else {
                throw FerryError(.resumeDataStale, "The file of upload \(id) is gone, or the upload was cancelled for good; start it again.")
            }
            return try await command(.reopen(id), id)
        }
        let partExists = FileManager.default.fileExists(atPath: library.partURL(for: record).path)
        let stale = (record.state == .cancelled && !record.keepsPartFile) || (!partExists && record.durableBytes > 0)
        guard !stale else {
            throw FerryError(.resumeDataStale, "The partial file of transfer \(id) is gone; start the download again.")
        }
        // Like a resumed pause: the worker journals `resumed` with the offset the server accepts.
        return try await command(.reopen(id), id)
    }

    // MARK: - Reading

    /// True while a download or a retry timer holds the transfer: after a pause or cancel, it
    /// turns false once the worker has checkpointed and let go of the part file. The control's
    /// own answer.
    package func isHeld(_ id: Int64) -> Bool {
        control.isHeld(id)
    }

    package nonisolated func transfer(_ id: Int64) async throws -> Transfer {
        guard let record = try await journal.transfer(id: id) else { throw FerryError.notFound(transfer: id) }
        return model(record)
    }

    /// Transfers, optionally of one session and some states, with the newest event number.
    /// Transfers in creation order (or newest first), all of them or a page of `limit` after
    /// `cursor` (the previous page's ``TransferList/nextCursor``).
    package nonisolated func list(
        session: String? = nil, states: Set<TransferState>? = nil, limit: Int? = nil, cursor: String? = nil, newestFirst: Bool = false
    ) async throws -> TransferList {
        let seq = try await journal.lastEventSeq()
        let after = try cursor.map { text throws(FerryError) in
            guard let id = Int64(text), id >= 0 else { throw FerryError.invalidRequest("'\(text.prefix(40))' is not a cursor this list gave out.") }
            return id
        }
        // One more than asked: whether another page follows.
        let records = try await journal.transfers(
            session: session, states: states, limit: limit.map { $0 + 1 }, after: after, newestFirst: newestFirst
        )
        let page = limit.map { Array(records.prefix($0)) } ?? records
        let next = limit.flatMap { records.count > $0 ? page.last.map { String($0.transferId) } : nil }
        // Each distinct options text decoded once a page (transfers queued together share it:
        // decoding each was a fifth of listing a page).
        var shown: [String: TransferOptions?] = [:]
        let transfers = page.map { record in
            let options = record.options.map { text in
                if let known = shown[text] { return known }
                let decoded = TransferRecord.decoded(text)?.redacted
                shown[text] = decoded
                return decoded
            } ?? nil
            return model(record, shownOptions: options)
        }
        return TransferList(transfers: transfers, lastEventSeq: seq, nextCursor: next)
    }

    nonisolated func model(_ record: TransferRecord) -> Transfer {
        model(record, shownOptions: record.transferOptions?.redacted)
    }

    /// - Parameter shownOptions: its options as the API shows them, decoded already.
    nonisolated func model(_ record: TransferRecord, shownOptions: TransferOptions?) -> Transfer {
        record.model(library: library, live: record.state == .running ? progress.snapshot(record.transferId) : nil, shownOptions: shownOptions)
    }

    // MARK: - Commands

    /// Applies a command through the control and carries out its actions: a stopped worker is
    /// waited for (up to `Transfer.stopWait`) before the change is journaled, so that when a pause
    /// returns its bytes are durable and counted, a resume right after it starts at once, and a
    /// cancel has deleted the part file. Commands on one transfer run one at a time.
    private func command(_ input: TransferControl.Input, _ id: Int64) async throws -> Transfer {
        guard let record = try await journaledCommand(input, id) else { throw FerryError.notFound(transfer: id) }
        return model(record)
    }

    /// - Returns: the transfer as journaled afterwards (nil once removed).
    @discardableResult
    private func journaledCommand(_ input: TransferControl.Input, _ id: Int64) async throws -> TransferRecord? {
        // The control says when it is this command's turn on the transfer.
        nextCommand += 1
        let turn = StopSignal()
        commandTurns[nextCommand] = turn
        await self.input(.commandArrived(id, token: nextCommand))
        await turn.wait()
        do {
            let record = try await turnCommand(input, id)
            await self.input(.commandDone(id))
            return record
        } catch {
            await self.input(.commandDone(id))
            throw error
        }
    }

    /// A command in its turn: carried out, or undone when the journal refuses it.
    private func turnCommand(_ input: TransferControl.Input, _ id: Int64) async throws -> TransferRecord? {
        // A finished transfer: the control knows it for the command, then forgets it again.
        if control.entry(id) == nil {
            guard let record = try await journal.transfer(id: id) else { throw FerryError.notFound(transfer: id) }
            await self.input(.loaded([(id, .init(record))]))
        }
        guard let before = control.entry(id) else { throw FerryError.notFound(transfer: id) }
        let actions = try control.handle(input, now: Date())
        do {
            let written = try await execute(actions, for: id)
            if case .remove = input { return nil }
            if let written { return written }
            return try await journal.transfer(id: id)
        } catch {
            // Not journaled: the transfer is as it was, with a worker or timer again if it had one.
            await execute((try? control.handle(.restore(id, before), now: Date())) ?? [])
            throw error
        }
    }
}
