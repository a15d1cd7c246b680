import FerryKit
import Foundation

extension TransferEngine {
    /// Session identifiers are short names: letters, digits, `.`, `_`, `-`.
    public static func validateSession(_ session: String) throws(FerryError) {
        guard !session.isEmpty, session.count <= 64,
            session.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") })
        else {
            throw FerryError.invalidRequest(
                "'\(session.prefix(80))' is not a valid session name; use up to 64 letters, digits, '.', '_' or '-'."
            )
        }
    }

    /// Journals new transfers (or finds the ones already asked for) and schedules them.
    /// - Returns: one transfer per URL, in order.
    public func enqueue(_ request: DownloadRequest) async throws -> [Transfer] {
        try Self.validateSession(request.session)
        try request.options?.validate()
        let folder = Library.safeFolder(request.folder)
        let startAfter = try await startAfter(session: request.session, own: request.options)
        var result: [Transfer] = []
        for url in request.urls {
            var draft = TransferRecord(
                session: request.session, url: url.absoluteString, folder: folder,
                suggestedName: request.suggestedName, preferredName: request.preferredName,
                taskDescription: request.taskDescription
            )
            draft.transferOptions = request.options
            draft.startAfter = startAfter
            let (record, _) = try await journal.createTransfer(draft, reuseExisting: !request.force)
            result.append(model(record))
        }
        await schedule()
        return result
    }

    /// Journals an upload of a local file and schedules it. The file is checked now (it must be
    /// a readable regular file) and again while it is sent.
    public func upload(_ request: CreateUploadRequest, session: String) async throws -> Transfer {
        try Self.validateSession(session)
        try request.options?.validate()
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
        var draft = TransferRecord(session: session, url: url.absoluteString, folder: "", taskDescription: request.taskDescription)
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
        let (record, _) = try await journal.createTransfer(draft, reuseExisting: false)
        await schedule()
        return model(record)
    }

    /// When a new transfer may start: its own date, else its session's, else the daemon's.
    private func startAfter(session: String, own: TransferOptions?) async throws -> Date? {
        if let date = own?.startAfter { return date }
        if let date = try await journal.sessionOptions(session).startAfter { return date }
        return try await journal.daemonOptions().startAfter
    }

    // MARK: Configuration

    /// A session's options (`nil`: the daemon's), as stored.
    public nonisolated func options(session: String?) async throws -> TransferOptions {
        if let session {
            try Self.validateSession(session)
            return try await journal.sessionOptions(session)
        }
        return try await journal.daemonOptions()
    }

    /// Changes a session's options (`nil`: the daemon's) and applies them to what is running
    /// and queued.
    public func updateOptions(session: String?, _ update: TransferOptionsUpdate) async throws -> TransferOptions {
        if let session { try Self.validateSession(session) }
        let updated: TransferOptions
        if let session {
            updated = try await journal.updateSessionOptions(session) { try update.applied(to: $0) }
        } else {
            updated = try await journal.updateDaemonOptions { try update.applied(to: $0) }
        }
        await configurationChanged(session: session, options: updated)
        return updated
    }

    public func pause(_ id: Int64) async throws -> Transfer {
        try await command(.pause, id) { record in record.event(.paused) }
    }

    /// Resumes a paused or failed transfer (it joins the queue), or retries a waiting one now.
    public func resume(_ id: Int64) async throws -> Transfer {
        try await command(.resume, id) { record in
            record.error = nil
            record.failures = 0
            record.retryAt = nil
            record.waitReason = nil
            record.waitingSince = nil
            record.waitsForNetwork = false
            return nil
        }
    }

    /// Stops a transfer for good and deletes its part file, unless `keepingResumeData`, in which
    /// case the part file stays for ``resumeData(for:)`` and ``resume(with:)``.
    public func cancel(_ id: Int64, keepingResumeData: Bool = false) async throws -> Transfer {
        try await command(.cancel, id) { record in
            record.keepsPartFile = keepingResumeData
            record.retryAt = nil
            return record.event(.cancelled)
        }
    }

    /// Forgets a transfer (cancelling it first if needed). With `deleteFile`, a completed
    /// transfer's file is deleted too.
    public func remove(_ id: Int64, deleteFile: Bool) async throws {
        guard let record = try await journal.transfer(id: id) else { throw FerryError.notFound(transfer: id) }
        if record.state.isActive || record.state == .paused {
            _ = try await cancel(id)
        }
        _ = try await journal.removeTransfer(id: id)
        if deleteFile, record.state == .completed, let relative = record.relativePath {
            let url = library.absolute(relative)
            if library.contains(url) { try? FileManager.default.removeItem(at: url) }
        }
        holders.withLock { $0[id] }?.stop.fire()
        try? FileManager.default.removeItem(at: library.partURL(for: id))
    }

    /// The resume data of a transfer that has bytes on disk.
    public func resumeData(for id: Int64) async throws -> ResumeData {
        guard let record = try await journal.transfer(id: id) else { throw FerryError.notFound(transfer: id) }
        if record.state == .cancelled, !record.keepsPartFile {
            throw FerryError(.resumeDataStale, "Transfer \(id) was cancelled and its partial file deleted; start it again.")
        }
        guard record.state != .completed else {
            throw FerryError.invalidState("Transfer \(id) is completed; there is nothing to resume.")
        }
        return ResumeData(
            transferId: id, session: record.session, url: record.url, durableBytes: record.durableBytes,
            totalBytes: record.totalBytes, validator: record.validator
        )
    }

    /// Continues the transfer that `resumeData` came from, from the bytes still on disk.
    /// - Throws: `resume_data_stale` when the daemon no longer has the part file or the
    ///   transfer; `resume_data_invalid` when it belongs to another session or URL.
    public func resume(with resumeData: ResumeData, session: String) async throws -> Transfer {
        let id = resumeData.transferId
        guard let record = try await journal.transfer(id: id) else {
            throw FerryError(.resumeDataStale, "The daemon no longer knows transfer \(id); start the download again.")
        }
        guard record.session == session, record.url == resumeData.url else {
            throw FerryError(.resumeDataInvalid, "This resume data belongs to another session or URL.")
        }
        if record.state == .completed || record.state.isActive { return model(record) }
        let partExists = FileManager.default.fileExists(atPath: library.partURL(for: id).path)
        let stale = (record.state == .cancelled && !record.keepsPartFile) || (!partExists && record.durableBytes > 0)
        guard !stale else {
            throw FerryError(.resumeDataStale, "The partial file of transfer \(id) is gone; start the download again.")
        }
        let updated = try await store.update(id: id) { record in
            // Resume data brings back a cancelled transfer that kept its part file.
            record.state = .queued
            record.keepsPartFile = false
            record.error = nil
            record.failures = 0
            // Like a resumed pause: the worker journals `resumed` with the offset the server accepts.
            return nil
        }
        await schedule()
        return model(updated)
    }

    // MARK: - Reading

    /// True while a download or a retry timer holds the transfer: after a pause or cancel, it
    /// turns false once the worker has checkpointed and let go of the part file.
    public nonisolated func isHeld(_ id: Int64) -> Bool {
        holders.withLock { $0[id] != nil }
    }

    public nonisolated func transfer(_ id: Int64) async throws -> Transfer {
        guard let record = try await journal.transfer(id: id) else { throw FerryError.notFound(transfer: id) }
        return model(record)
    }

    /// Transfers, optionally of one session and some states, with the newest event number.
    public nonisolated func list(session: String? = nil, states: Set<TransferState>? = nil) async throws -> TransferList {
        let seq = try await journal.lastEventSeq()
        let records = try await journal.transfers(session: session, states: states)
        return TransferList(transfers: records.map(model), lastEventSeq: seq)
    }

    nonisolated func model(_ record: TransferRecord) -> Transfer {
        record.model(library: library, live: record.state == .running ? progress.snapshot(record.transferId) : nil)
    }

    // MARK: - Commands

    /// Applies a person's command: journal first (one transaction, through the lifecycle), then
    /// the effects. A stopped worker is waited for (up to `Transfer.stopWait`), so that when a pause
    /// returns its bytes are durable and counted, a resume right after it starts at once, and a
    /// cancel has deleted the part file.
    private func command(
        _ command: TransferLifecycle.Command, _ id: Int64,
        change: @escaping @Sendable (inout TransferRecord) throws -> TransferEvent?
    ) async throws -> Transfer {
        // What holds the transfer lets go before the change is journaled: the worker's last
        // checkpoint comes first, so the change's event (a pause's) carries every byte on disk,
        // which is where a resume starts. (Nothing holding it: nothing to read or stop.)
        var stopped = false
        if holders.withLock({ $0[id] != nil }), let current = try await journal.transfer(id: id),
            try TransferLifecycle.transition(from: current.state, on: command, finishing: current.fileName != nil)
                .effects.contains(.stopWorker)
        {
            await stopHolder(id)
            stopped = true
        }
        var (record, transition): (TransferRecord, TransferLifecycle.Transition)
        do {
            (record, transition) = try await store.apply(command, to: id, change: change)
        } catch {
            // Not journaled (the journal failed, or another command came first): a transfer
            // still running or waiting to retry must not be left without its worker or timer.
            if stopped { await restoreHolder(id) }
            throw error
        }
        for effect in transition.effects {
            switch effect {
            case .stopWorker:
                // Stopped above unless the transfer was in another state then (queued, and
                // started since); nothing takes a running or waiting transfer in between.
                if !stopped { await stopHolder(id) }
                record = try await journal.transfer(id: id) ?? record
            case .deletePartFile:
                if holders.withLock({ $0[id] == nil }), !record.keepsPartFile {
                    try? FileManager.default.removeItem(at: library.partURL(for: id))
                }
            case .schedule: await schedule()
            }
        }
        return model(record)
    }

    /// Asks the worker or retry timer holding the transfer to let go, and waits until it has (up
    /// to ``Transfer/stopWait``, for a slow disk).
    private func stopHolder(_ id: Int64) async {
        guard let holder = holders.withLock({ $0[id] }) else { return }
        holder.stop.fire()
        _ = try? await holder.released.race { try await Task.sleep(for: Transfer.stopWait) }
    }
}
