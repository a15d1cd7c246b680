import FerryKit
import Foundation

/// A Ferry transfer as aria2 describes a download (`aria2.tellStatus`, `getFiles`, `getUris`):
/// numbers as decimal strings, a status of aria2's, one file with its URIs. Pure.
enum Aria2Status {
    /// Where the file is going: aria2 names it before it is there (empty while the name is
    /// not known yet: the server's Content-Disposition decides it).
    struct Place {
        var path: String
        var directory: String
    }

    /// active, waiting, paused, error, complete or removed.
    static func status(_ state: TransferState) -> String {
        switch state {
        case .running: "active"
        case .queued, .waiting: "waiting"
        case .paused: "paused"
        case .failed: "error"
        case .completed: "complete"
        case .cancelled: "removed"
        }
    }

    /// The status object; `keys` keeps only those named (all when empty), as aria2 does.
    static func object(_ transfer: Transfer, gid: String, place: Place, keys: [String] = []) -> [String: Any] {
        let total = transfer.totalBytes ?? 0
        let done = transfer.state == .completed ? max(transfer.bytesReceived, total) : transfer.bytesReceived
        var object: [String: Any] = [
            "gid": gid,
            "status": status(transfer.state),
            "totalLength": String(total),
            "completedLength": String(done),
            "uploadLength": "0",
            "downloadSpeed": String(transfer.state == .running ? Int64(transfer.bytesPerSecond ?? 0) : 0),
            "uploadSpeed": "0",
            "connections": String(transfer.state == .running ? max(transfer.connections ?? 1, 1) : 0),
            // aria2's pieces are of 1 MiB for HTTP; Ferry verifies whole files, so they only count.
            "numPieces": String((total + (1 << 20) - 1) >> 20),
            "pieceLength": String(1 << 20),
            "dir": place.directory,
            "files": files(transfer, place: place),
        ]
        // As aria2: a stopped download says how it ended; 0 is no error.
        if transfer.state.isFinal {
            object["errorCode"] = transfer.state == .failed ? errorCode(transfer.error?.code) : "0"
            object["errorMessage"] = transfer.state == .failed ? transfer.error?.message ?? "" : ""
        }
        if keys.isEmpty { return object }
        return object.filter { keys.contains($0.key) }
    }

    static func files(_ transfer: Transfer, place: Place) -> [[String: Any]] {
        let total = transfer.totalBytes ?? 0
        let done = transfer.state == .completed ? max(transfer.bytesReceived, total) : transfer.bytesReceived
        return [[
            "index": "1",
            "path": place.path,
            "length": String(total),
            "completedLength": String(done),
            "selected": "true",
            "uris": uris(transfer),
        ]]
    }

    static func uris(_ transfer: Transfer) -> [[String: Any]] {
        let used = transfer.state == .running || transfer.state == .completed
        return [["uri": transfer.url, "status": used ? "used" : "waiting"]]
            + (transfer.mirrors ?? []).map { ["uri": $0.url, "status": "waiting"] }
    }

    /// aria2's exit status for an error: 2 a timeout, 6 a network problem, 9 a full disk,
    /// 16 a file it could not write, 22 an HTTP answer it did not want, 24 refused credentials,
    /// 32 a checksum; 1 anything else.
    static func errorCode(_ code: String?) -> String {
        switch code {
        case FerryError.Code.timeout.rawValue?: "2"
        case FerryError.Code.connectionFailed.rawValue?, FerryError.Code.untrustedCertificate.rawValue?: "6"
        case FerryError.Code.diskFull.rawValue?: "9"
        case FerryError.Code.fileSystem.rawValue?: "16"
        case FerryError.Code.httpStatus.rawValue?, FerryError.Code.tooManyRedirects.rawValue?, FerryError.Code.redirectRefused.rawValue?: "22"
        case FerryError.Code.unauthorized.rawValue?: "24"
        case FerryError.Code.checksumMismatch.rawValue?: "32"
        default: "1"
        }
    }
}
