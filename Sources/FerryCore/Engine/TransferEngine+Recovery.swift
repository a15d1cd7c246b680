#if canImport(Glibc)
import Glibc
#endif
import FerryModel
import Foundation

/// Recovery at start: what the last run left in the journal and in `.partial/` is taken in,
/// finished or cut back, as the pure rules decide (``InterruptedMove``, ``PartFileTail``).
extension TransferEngine {
    /// Every transfer in `states`, in pages of 10,000 by id.
    private func forEachUnfinished(_ states: Set<TransferState>, _ body: (TransferRecord) async throws -> Void) async throws {
        var after: Int64?
        while true {
            let page = try await journal.transfers(states: states, limit: 10_000, after: after)
            for record in page { try await body(record) }
            guard page.count == 10_000, let last = page.last else { return }
            after = last.transferId
        }
    }

    /// Takes in the transfers of the last run, finishes moves a crash interrupted, deletes part
    /// files nobody owns and settles how much of the others to trust. Running ones go back into
    /// the queue and waiting ones get their timers when the engine runs.
    func recover() async throws {
        try FileManager.default.createDirectory(at: library.partials, withIntermediateDirectories: true)
        try await checkJournalAfterAnUncleanStop()
        var moved: [TransferControl.Input] = []
        // A page at a time: a queue of half a million is never in memory as whole records.
        var page: [(id: Int64, entry: TransferControl.Entry)] = []
        try await forEachUnfinished([.queued, .running, .waiting, .paused, .failed]) { found in
            var record = found
            if record.fileName != nil {
                if let completed = await finishInterruptedMove(record) {
                    moved.append(completed)
                } else {
                    record.fileName = nil
                }
            }
            page.append((record.transferId, .init(record)))
            if page.count == 10_000 {
                await input(.loaded(page))
                page = []
            }
        }
        await input(.loaded(page))
        for completed in moved { await input(completed) }
        try await deleteOrphanPartFiles()
        try await settlePartFileTails()
    }

    /// After a daemon that did not stop cleanly (killed, or the machine lost power), SQLite's
    /// integrity check; after a clean stop, nothing (a large journal takes seconds to check).
    private func checkJournalAfterAnUncleanStop() async throws {
        guard try await local.markRunning() else {
            journalCheck = .skipped
            return
        }
        let started = ContinuousClock.now
        let problems = try await local.integrityProblems()
        journalCheck = problems.isEmpty ? .intact : .damaged(problems)
        if problems.isEmpty {
            logger.notice("the last stop was unclean: the journal was checked and is intact", metadata: ["duration": "\(ContinuousClock.now - started)"])
        } else {
            logger.error("the journal is damaged; stop the daemon and run `ferry doctor --fix`", metadata: ["problems": "\(problems.prefix(5))"])
        }
    }

    /// Journals as durable what each part file can be trusted with (``PartFileTail``): all of it
    /// if the machine has not restarted since the last daemon (after an fsync), else only its
    /// checkpointed bytes, cutting every part file back to them before this boot is recorded.
    private func settlePartFileTails() async throws {
        let boot = configuration.bootID
        let lastBoot = try await local.lastBoot()
        let sameBoot = boot != nil && lastBoot == boot
        // Running ones too: they go back into the queue only when the engine runs.
        let unfinished: Set<TransferState> = [.queued, .running, .paused, .waiting, .failed, .cancelled]
        // Only transfers that have a part file: `.partial/` is read once, rather than a path made
        // and looked up for every queued transfer (half a million of them made start-up slow).
        let partials = Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: library.partials.path)) ?? [])
                .compactMap { $0.hasSuffix(".part") ? Int64($0.dropLast(5)) : nil }
        )
        // A segmented download's file has holes between its ranges: only its journaled ranges count.
        try await forEachUnfinished(unfinished) { record in
            guard record.kind == .download, record.segments == nil, record.directory != nil || partials.contains(record.transferId) else { return }
            let url = library.partURL(for: record)
            var info = stat()
            guard stat(url.path, &info) == 0 else { return }
            let length = Int64(info.st_size)
            let trusted = PartFileTail.trusted(
                fileLength: length, journaled: record.durableBytes, total: record.totalBytes, sameBoot: sameBoot
            )
            if trusted != length || trusted != record.durableBytes {
                try await BlockingIO.run { () throws(FerryError) in
                    let part = try PartFile(url: url)
                    defer { part.close() }
                    try part.truncate(to: trusted)
                    try part.sync()
                }
            }
            if trusted != record.durableBytes {
                try await store.record(.durable(trusted), of: record.transferId)
            }
        }
        if let boot { try await local.recordBoot(boot) }
    }

    /// A transfer whose final name was journaled but which is not completed: the process (or
    /// the member that ran it) stopped during the move into the library. Finishes the move as
    /// ``InterruptedMove`` decides and returns the control's input that completes it, or
    /// forgets the name so that it runs again.
    func finishInterruptedMove(_ record: TransferRecord) async -> TransferControl.Input? {
        let id = record.transferId
        guard let path = record.filePath(in: library), let sha256 = record.sha256 else { return nil }
        let part = library.partURL(for: record)
        let target = URL(fileURLWithPath: path)
        var partInfo = stat(), targetInfo = stat()
        let partExists = stat(part.path, &partInfo) == 0
        let targetExists = stat(target.path, &targetInfo) == 0
        let facts = InterruptedMove.Facts(
            partExists: partExists, targetExists: targetExists,
            sameFile: partExists && targetExists && partInfo.st_ino == targetInfo.st_ino && partInfo.st_dev == targetInfo.st_dev,
            targetSize: targetExists ? Int64(targetInfo.st_size) : nil, expectedSize: record.totalBytes
        )
        let decision = InterruptedMove.decide(facts)
        let completed: Bool
        switch decision {
        case .unlinkPart:
            unlink(part.path)
            completed = true
        case .link:
            completed = link(part.path, target.path) == 0 && unlink(part.path) == 0
            if completed { try? await BlockingIO.run { syncDirectory(target.deletingLastPathComponent()) } }
        case .placed:
            completed = true
        case .runAgain:
            completed = false
        }
        if completed {
            logger.info("finished an interrupted move", metadata: ["transfer.id": "\(id)", "move": "\(decision)"])
            return .recoveredMove(id, path: path, sha256: sha256)
        }
        // Run it again: from the part file (also one whose link just failed), or from zero.
        let keepsBytes = if case .runAgain(let keeps) = decision { keeps } else { true }
        _ = try? await store.record(.nameForgotten(keepsBytes: keepsBytes), of: id)
        return nil
    }

    private func deleteOrphanPartFiles() async throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: library.partials.path)) ?? []
        for name in names {
            let url = library.partials.appendingPathComponent(name)
            guard name.hasSuffix(".part"), let id = Int64(name.dropLast(5)) else {
                try? FileManager.default.removeItem(at: url)
                continue
            }
            let record = try await journal.transfer(id: id)
            let keep = record.map { !$0.state.isFinal || $0.state == .failed || $0.keepsPartFile } ?? false
            if !keep { try? FileManager.default.removeItem(at: url) }
        }
    }
}
