#if canImport(Glibc)
import Glibc
#endif
import FerryModel
import Foundation

/// The library folder and the rules for putting files into it. Nothing is ever written outside
/// the root: folders and names are sanitised, and every path is checked to stay inside.
package struct LibraryFolder: Sendable {
    package let root: URL
    /// `root.path`, kept: ``absolutePath(_:)`` runs for every transfer of a list.
    private let rootPath: String

    package init(root: URL) {
        self.root = root.standardizedFileURL
        let path = self.root.path
        rootPath = path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// Where unfinished downloads live.
    package var partials: URL { root.appendingPathComponent(".partial", isDirectory: true) }

    package func partURL(for id: Int64) -> URL {
        partials.appendingPathComponent("\(id).part")
    }

    /// Where a transfer's unfinished bytes wait: beside the file in a folder the user chose (a
    /// hidden `.NAME.ID.ferry-part`, so the last step is a rename on one file system), else in
    /// `.partial/`.
    package func partURL(for record: TransferRecord) -> URL {
        guard let directory = record.directory else { return partURL(for: record.transferId) }
        return URL(fileURLWithPath: directory, isDirectory: true)
            .appendingPathComponent(".\(record.outputName ?? "download").\(record.transferId).ferry-part")
    }

    /// Checks a folder the user chose for downloads, before anything is journaled: an absolute
    /// path to a writable folder (created first with `create`).
    /// - Returns: the path, standardized.
    package static func checkDirectory(_ path: String, create: Bool) throws(FerryError) -> String {
        guard path.hasPrefix("/") else {
            throw FerryError.invalidRequest("Give the folder as an absolute path ('\(path.prefix(80))' is relative).")
        }
        guard !path.utf8.contains(0) else { throw FerryError.invalidRequest("A folder's path cannot contain NUL.") }
        let standardized = URL(fileURLWithPath: path).standardizedFileURL.path
        var isFolder: ObjCBool = false
        if !FileManager.default.fileExists(atPath: standardized, isDirectory: &isFolder) {
            guard create else {
                throw FerryError.invalidRequest("The folder \(standardized) does not exist (--mkdir, or 'createDirectory', creates it).")
            }
            do {
                try FileManager.default.createDirectory(atPath: standardized, withIntermediateDirectories: true)
            } catch {
                throw FerryError(.fileSystem, "Could not create the folder \(standardized): \(error.localizedDescription)")
            }
            isFolder = true
        }
        guard isFolder.boolValue else { throw FerryError.invalidRequest("\(standardized) is not a folder.") }
        guard access(standardized, W_OK) == 0 else {
            throw FerryError.invalidRequest("The folder \(standardized) is not writable.")
        }
        return standardized
    }

    /// Checks a file name the user chose: a name, never a path.
    package static func checkFileName(_ name: String) throws(FerryError) -> String {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.utf8.contains(0) else {
            throw FerryError.invalidRequest("'\(name.prefix(80))' is not a file name: give a name without '/', not '.' or '..'.")
        }
        guard name.utf8.count <= 255 else { throw FerryError.invalidRequest("A file name is at most 255 bytes.") }
        return name
    }

    /// The absolute path of a path relative to the root.
    package func absolute(_ relative: String) -> URL {
        root.appendingPathComponent(relative)
    }

    /// `absolute(relative).path` without building a URL (which stats the file to learn whether
    /// it is a folder).
    package func absolutePath(_ relative: String) -> String {
        rootPath + "/" + relative
    }

    /// A library folder such as `Downloads` or `Podcasts/Show name`, every component sanitised.
    package static func safeFolder(_ folder: String) -> String {
        let parts = folder.unicodeScalars.split(separator: "/").compactMap { FileNamer.sanitize(String($0)) }
        return parts.isEmpty ? "Downloads" : parts.joined(separator: "/")
    }

    /// True when `url` is inside the root (after resolving `..` and symlinks).
    package func contains(_ url: URL) -> Bool {
        let rootPath = Self.resolved(root)
        let path = Self.resolved(url)
        return path.hasPrefix(rootPath + "/")
    }

    /// The path with `..` and symlinks resolved. `resolvingSymlinksInPath` leaves a path that does
    /// not exist (a file about to be written) untouched, so resolve its deepest existing ancestor
    /// and put the rest back.
    private static func resolved(_ url: URL) -> String {
        var existing = url.standardizedFileURL
        var rest: [String] = []
        while existing.path.hasPrefix("/"), existing.path != "/", !FileManager.default.fileExists(atPath: existing.path) {
            rest.insert(existing.lastPathComponent, at: 0)
            existing.deleteLastPathComponent()
        }
        return rest.reduce(existing.resolvingSymlinksInPath()) { $0.appendingPathComponent($1) }.path
    }

    /// Creates the root, `.partial/` and a folder, as needed.
    func prepare(folder: String) throws(FerryError) -> URL {
        let url = root.appendingPathComponent(Self.safeFolder(folder), isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw FerryError(.fileSystem, "Could not create the folder \(url.path): \(error.localizedDescription)")
        }
        return url
    }

    /// Moves a finished part file into `folder` under `name`, or `name (2)`, `name (3)`... when
    /// taken. The name is journaled (`reserve`) before the move so recovery can finish it.
    /// The move is a hard link (which fails rather than replace an existing file) and an unlink,
    /// followed by an fsync of the folder it lands in.
    /// - Returns: the chosen name.
    /// In a folder the user chose (`directory`), the name is theirs and `overwrite` replaces a
    /// file of that name (rename); the library's folders are created as needed.
    func place(
        part: URL, folder: String, directory: String? = nil, name: String, overwrite: Bool = false,
        reserve: (String) async throws -> Void
    ) async throws -> String {
        let folderURL: URL
        if let directory {
            folderURL = URL(fileURLWithPath: directory, isDirectory: true)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue else {
                throw FerryError(.fileSystem, "The folder \(directory) is gone: create it again, then resume.")
            }
        } else {
            folderURL = try prepare(folder: folder)
        }
        for number in 1...10_000 {
            let candidate = FileNamer.variant(of: name, number: number)
            let target = folderURL.appendingPathComponent(candidate)
            guard directory != nil || contains(target) else {
                throw FerryError(.fileSystem, "Refusing to write outside the library: \(target.path)")
            }
            if overwrite {
                try await reserve(candidate)
                guard rename(part.path, target.path) == 0 else { throw PartFile.error(errno, "move", target) }
                try await BlockingIO.run { syncDirectory(folderURL) }
                return candidate
            }
            if FileManager.default.fileExists(atPath: target.path) { continue }
            try await reserve(candidate)
            if link(part.path, target.path) == 0 {
                unlink(part.path)
            } else if errno == EEXIST {
                continue
            } else if errno == EPERM || errno == EXDEV || errno == ENOTSUP || errno == EOPNOTSUPP {
                // File systems without hard links: rename after the existence check above.
                guard rename(part.path, target.path) == 0 else { throw PartFile.error(errno, "move", target) }
            } else {
                throw PartFile.error(errno, "move", target)
            }
            // Only the new name needs to be durable: should the part file's unlink be lost in a
            // crash, recovery deletes the part file of a completed transfer.
            try await BlockingIO.run { syncDirectory(folderURL) }
            return candidate
        }
        throw FerryError(.fileSystem, "Could not find a free name for \(name) in \(folderURL.path).")
    }
}
