#if canImport(Glibc)
import Glibc
#endif
import Crypto
import FerryKit
import Foundation
import Synchronization

/// The browser extension's credential: `ferry extension pair` asks for a one-time code (valid
/// five minutes, usable once), the extension trades it for a token of its own
/// (`POST /v1/extension/pair`), and `ferry extension revoke` forgets it.
///
/// One extension is paired at a time; pairing again replaces its token. The daemon keeps only the
/// token's SHA-256 digest, in `extension.json` in the state folder (mode 0600), with the
/// extension's origin (`chrome-extension://ID`) when it paired from one: requests from another
/// extension's origin are refused even with the token (``accepts(origin:)``).
final class ExtensionPairing: Sendable {
    static let codeLifetime: TimeInterval = 5 * 60

    /// What `extension.json` holds.
    struct Record: Codable, Sendable, Equatable {
        var tokenSHA256: String
        var origin: String?
        var pairedAt: Date
    }

    private let file: URL
    private let folder: URL
    private let codes = Mutex<[String: Date]>([:])
    private let record: Mutex<Record?>

    /// Reads the pairing from the state folder (none when the file is missing or unreadable).
    init(paths: FerryPaths) {
        file = paths.extensionPairing
        folder = paths.state
        let stored = FileManager.default.contents(atPath: paths.extensionPairing.path).flatMap { try? FerryJSON.decoder().decode(Record.self, from: $0) }
        record = Mutex(stored)
    }

    /// A fresh single-use pairing code (128 random bits, hex).
    func makeCode(now: Date = Date()) -> String {
        let code = SecretFile.randomHex(byteCount: 16)
        codes.withLock { codes in
            codes = codes.filter { $0.value > now }
            codes[code] = now.addingTimeInterval(Self.codeLifetime)
        }
        return code
    }

    /// Uses up `code` and pairs: a new token replaces any earlier one.
    /// - Parameter origin: the request's extension origin, if it came from one.
    /// - Throws: `unauthorized` for an unknown, used or expired code; `file_system` when the
    ///   pairing cannot be saved.
    func pair(code: String, origin: String?, now: Date = Date()) throws -> ExtensionToken {
        let valid = codes.withLock { codes in
            guard let expiry = codes.removeValue(forKey: code.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()) else { return false }
            return expiry > now
        }
        guard valid else {
            throw FerryError(.unauthorized, "This pairing code is unknown, used or expired; `ferry extension pair` prints a new one (valid five minutes, once).")
        }
        let token = SecretFile.randomHex(byteCount: 32)
        // Whole seconds: what the file and the API's ISO 8601 dates keep.
        let paired = Record(tokenSHA256: Self.digest(token), origin: origin, pairedAt: Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down)))
        try record.withLock { record in
            try save(paired)
            record = paired
        }
        return ExtensionToken(token: token, pairedAt: paired.pairedAt)
    }

    /// True when `token` is the paired extension's.
    func isValid(token: String) -> Bool {
        guard let stored = record.withLock({ $0 }) else { return false }
        return TokenAuthMiddleware.constantTimeEqual(Self.digest(token), stored.tokenSHA256)
    }

    /// True for the origin the extension paired from (any, when it paired without one).
    func accepts(origin: String) -> Bool {
        guard let stored = record.withLock({ $0 }) else { return false }
        return stored.origin == nil || stored.origin == origin
    }

    var status: ExtensionStatus {
        record.withLock { record in
            ExtensionStatus(paired: record != nil, pairedAt: record?.pairedAt, origin: record?.origin)
        }
    }

    /// Forgets the token (and any unused codes). - Returns: what was paired before.
    func revoke() throws -> ExtensionStatus {
        codes.withLock { $0 = [:] }
        return try record.withLock { record in
            let before = ExtensionStatus(paired: record != nil, pairedAt: record?.pairedAt, origin: record?.origin)
            if unlink(file.path) != 0, errno != ENOENT {
                throw FerryError(.fileSystem, "Could not delete \(file.path): \(String(cString: strerror(errno))).")
            }
            record = nil
            return before
        }
    }

    static func digest(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).hexText
    }

    /// Writes the record to a new file of mode 0600, fsyncs it, and renames it into place.
    private func save(_ record: Record) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = folder.appendingPathComponent(".extension.json.\(SecretFile.randomHex(byteCount: 6))")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FerryError(.fileSystem, "Could not create \(temporary.path): \(String(cString: strerror(errno))).") }
        let bytes = Array(try FerryJSON.encoder().encode(record)) + [0x0A]
        let written = write(fd, bytes, bytes.count) == bytes.count && fsync(fd) == 0
        var failure = written ? nil : String(cString: strerror(errno))
        close(fd)
        if failure == nil, rename(temporary.path, file.path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporary.path)
            throw FerryError(.fileSystem, "Could not write \(file.path): \(failure).")
        }
    }
}
