import FerryCore
import FerryKit
import FerryListening
import Foundation

extension Doctor {
    /// Part files no transfer owns (deleted by `fix`), and unfinished transfers whose part file
    /// is gone (they fetch those bytes again: nothing to mend).
    /// - Parameter known: the transfers read before, for the folders their part files sit in.
    func checkPartFiles(_ known: [TransferRecord], fix: Bool) async -> DoctorCheck {
        // Files first, rows second: a part file is made after its transfer's row and ids are
        // never reused, so a file whose id has no row now never will have one.
        let folders = Set(known.compactMap(\.directory))
        var found = Self.partFiles(in: library.partials, pattern: .partial)
        for folder in folders { found += Self.partFiles(in: URL(fileURLWithPath: folder, isDirectory: true), pattern: .beside) }
        guard let transfers = try? await allTransfers() else {
            return DoctorCheck(name: "partFiles", status: .problem, summary: "cannot read the transfers from the journal")
        }
        let byId = Dictionary(transfers.compactMap { record in record.id.map { ($0, record) } }, uniquingKeysWith: { first, _ in first })
        let orphans = found.filter { file in
            guard let record = byId[file.id] else { return true }
            // A cancelled transfer keeps its bytes only for its resume data.
            return record.state == .cancelled && !record.keepsPartFile
        }
        let unfinished: Set<TransferState> = [.queued, .running, .waiting, .paused, .failed]
        let missing = transfers.filter { record in
            record.kind == .download && unfinished.contains(record.state) && record.durableBytes > 0
                && !FileManager.default.fileExists(atPath: library.partURL(for: record).path)
        }
        let orphanBytes = orphans.reduce(Int64(0)) { $0 + $1.bytes }
        var details = orphans.map { "\($0.url.path): no transfer \($0.id) (\(ByteText.format($0.bytes)))" }
        details += missing.map { "transfer \($0.transferId) (\($0.url)): its part file is gone; \(ByteText.format($0.durableBytes)) will be fetched again" }
        var mended: [String] = []
        if fix, !orphans.isEmpty {
            var deleted = 0
            for orphan in orphans where (try? FileManager.default.removeItem(at: orphan.url)) != nil { deleted += 1 }
            mended.append("deleted \(deleted) part file\(deleted == 1 ? "" : "s") no transfer owned (\(ByteText.format(orphanBytes)))")
        }
        if orphans.isEmpty, missing.isEmpty {
            return DoctorCheck(name: "partFiles", status: .ok, summary: "every part file belongs to an unfinished transfer (\(found.count))")
        }
        var summary: [String] = []
        if !orphans.isEmpty { summary.append("\(orphans.count) part file\(orphans.count == 1 ? " belongs" : "s belong") to no transfer (\(ByteText.format(orphanBytes)))") }
        if !missing.isEmpty { summary.append("\(missing.count) unfinished transfer\(missing.count == 1 ? " has" : "s have") lost its part file") }
        let fixedOrphans = fix && !orphans.isEmpty
        return DoctorCheck(
            name: "partFiles", status: fixedOrphans || orphans.isEmpty ? .warning : .problem, summary: summary.joined(separator: "; "), details: details,
            advice: [
                orphans.isEmpty || fix ? nil : "Mending (`ferry doctor --fix`, or Mend in Settings › Health) deletes the part files no transfer owns.",
                missing.isEmpty ? nil : "A transfer whose part file is gone starts again from its first byte when it runs; nothing else is lost.",
            ].compactMap { $0 }.joined(separator: " ").nilIfEmpty,
            mended: mended
        )
    }

    func allTransfers() async throws -> [TransferRecord] {
        try await journal.listTransfers(session: nil, states: nil, limit: nil, after: nil, newestFirst: false)
    }

    struct PartFile {
        var url: URL
        var id: Int64
        var bytes: Int64
    }

    enum PartPattern { case partial, beside }

    /// `.partial/ID.part`, or a hidden `.NAME.ID.ferry-part` beside the file in a chosen folder.
    static func partFiles(in folder: URL, pattern: PartPattern) -> [PartFile] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.compactMap { name in
            let id: Int64?
            switch pattern {
            case .partial:
                id = name.hasSuffix(".part") ? Int64(name.dropLast(5)) : nil
            case .beside:
                guard name.hasPrefix("."), name.hasSuffix(".ferry-part") else { return nil }
                id = name.dropLast(".ferry-part".count).split(separator: ".").last.flatMap { Int64($0) }
            }
            guard let id else { return nil }
            let url = folder.appendingPathComponent(name)
            return PartFile(url: url, id: id, bytes: fileSize(url.path) ?? 0)
        }
    }

    /// Files in a podcast's or the songs' folder that no episode, song or transfer names: an
    /// episode's are given back to it by `fix` (its name is the one Ferry gave it). Plain
    /// downloads are not judged: their history is pruned by design, their files stay the user's.
    func checkLibraryFiles(_ transfers: [TransferRecord], fix: Bool) async -> DoctorCheck {
        let library = self.library
        var known = Set(transfers.compactMap { $0.state == .completed ? $0.filePath(in: library) : nil })
        let podcastRecords = (try? await podcasts?.store.podcasts()) ?? []
        known.formUnion(await episodeFiles(podcastRecords))
        var folders = podcastRecords.map { (record: Optional($0), folder: $0.folder) }
        folders.append((nil, "Music"))
        let subscribed = Set(podcastRecords.map(\.folder))
        let podcastsRoot = library.absolute("Podcasts")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: podcastsRoot.path)) ?? [] where !subscribed.contains("Podcasts/\(name)") {
            folders.append((nil, "Podcasts/\(name)"))
        }
        var orphans: [(folder: String, record: PodcastRecord?, path: String)] = []
        for (record, folder) in folders {
            let url = library.absolute(folder)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [] where !name.hasPrefix(".") {
                let path = url.appendingPathComponent(name).path
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue, !known.contains(path) else { continue }
                orphans.append((folder, record, path))
            }
        }
        guard !orphans.isEmpty else {
            return DoctorCheck(name: "libraryFiles", status: .ok, summary: "every file of the podcasts' and songs' folders has its record")
        }
        var mended: [String] = []
        var left = orphans
        if fix, let podcasts {
            let owners = Set(orphans.compactMap { $0.record?.podcastId })
            for id in owners { try? await podcasts.adoptFilesOnDisk(id) }
            let nowKnown = await episodeFiles(podcastRecords)
            let given = orphans.filter { nowKnown.contains($0.path) }
            left = orphans.filter { !nowKnown.contains($0.path) }
            for file in given { mended.append("\(file.path) given back to its episode of \(file.record?.title ?? file.folder)") }
        }
        let details = left.map { file in
            switch file.record {
            case .some(let record): "\(file.path): no episode of \(record.title) is named so"
            case .none where file.folder == "Music": "\(file.path): no song's download names it"
            case .none: "\(file.path): \(file.folder) is no subscribed podcast's folder"
            }
        }
        let adoptable = fix ? 0 : orphans.filter { $0.record != nil }.count
        return DoctorCheck(
            name: "libraryFiles", status: left.isEmpty ? .ok : .warning,
            summary: left.isEmpty
                ? "gave \(mended.count) file\(mended.count == 1 ? "" : "s") back to their episodes"
                : "\(left.count) file\(left.count == 1 ? "" : "s") in the library no record names (kept)",
            details: details,
            advice: left.isEmpty
                ? nil
                : (adoptable > 0 ? "Mending (`ferry doctor --fix`, or Mend in Settings › Health) gives a podcast's files back to the episodes they are named after. " : "")
                    + "Files no record names are kept and still yours; a folder of a podcast you left is subscribed again with `ferry podcast add` and its feed.",
            mended: mended
        )
    }

    /// The absolute paths every episode's file is known by (a transfer's or one found on disk).
    private func episodeFiles(_ records: [PodcastRecord]) async -> Set<String> {
        guard let store = podcasts?.store else { return [] }
        var paths = Set<String>()
        for record in records {
            for episode in (try? await store.episodes(podcastId: record.podcastId)) ?? [] {
                if let relative = episode.filePath { paths.insert(library.absolutePath(relative)) }
            }
        }
        return paths
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
