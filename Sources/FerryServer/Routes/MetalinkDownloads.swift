import FerryCore
import FerryFeeds
import FerryKit
import Foundation

/// A Metalink's files as downloads: each file one transfer from its best URL, its other URLs as
/// mirrors (ranges fetched from all, one that fails or differs dropped), its strongest digest as
/// the checksum the file is checked against before it is placed, and its name (a relative path
/// the parser has checked) under the folder asked for. Pure: every file is checked before any
/// is queued, so a document with one file Ferry cannot fetch queues nothing.
enum MetalinkDownloads {
    /// - Parameters:
    ///   - request: the API request that carried the document (session, folder, options...).
    ///   - locations: country codes whose mirrors go first (aria2's `--metalink-location`).
    /// - Throws: `metalink_invalid` for a file without an http(s) URL.
    static func requests(
        for metalink: Metalink, _ request: CreateTransfersRequest, session: String, locations: [String]
    ) throws(FerryError) -> [TransferEngine.DownloadRequest] {
        try metalink.files.map { file throws(FerryError) in
            let sources = file.sources(preferring: locations)
            guard let first = sources.first else {
                let schemes = Set(file.urls.compactMap(\.url.scheme)).sorted().joined(separator: ", ")
                throw FerryError(
                    .metalinkInvalid,
                    "The Metalink gives no http or https URL for \(file.name)"
                        + (schemes.isEmpty ? " (only other Metalink or torrent documents)." : " (only \(schemes)), and Ferry downloads over HTTP(S).")
                )
            }
            var download = TransferEngine.DownloadRequest(
                urls: [try TransferURL.validate(first.absoluteString)], session: session, force: request.force ?? false,
                taskDescription: request.taskDescription, options: request.options,
                mirrors: try sources.dropFirst().map { url throws(FerryError) in try TransferURL.validate(url.absoluteString) },
                outputName: file.fileName, overwrite: request.overwrite ?? false, checksum: file.strongestHash,
                priority: request.priority ?? .normal, paused: request.paused ?? false
            )
            if let directory = request.directory {
                download.directory = file.folder.map { (directory as NSString).appendingPathComponent($0) } ?? directory
                download.createDirectory = file.folder != nil || (request.createDirectory ?? false)
            } else if let folder = file.folder {
                download.folder = "Downloads/\(folder)"
            }
            return download
        }
    }
}
