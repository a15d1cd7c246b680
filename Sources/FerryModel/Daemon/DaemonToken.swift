#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The API token: 32 random bytes, hex, in the state folder with mode 0600. The daemon creates
/// it; clients of the same user read it.
public enum DaemonToken {
    /// Reads the token.
    /// - Throws: `daemon_unreachable` when there is none (no daemon ever ran here).
    public static func read(_ paths: FerryPaths) throws -> String {
        try SecretFile.read(paths.token, missing: "No API token at \(paths.token.path); start the daemon with `ferry serve`.")
    }

    /// Reads the token, creating it (mode 0600, created exclusively) when missing.
    public static func loadOrCreate(_ paths: FerryPaths) throws -> String {
        try SecretFile.loadOrCreate(paths.token, in: paths.state)
    }
}

/// A secret of 32 random bytes in hex, in a file of mode 0600 made exclusively (the API token,
/// the aria2 RPC's secret).
public enum SecretFile {
    /// - Throws: `daemon_unreachable` with `missing` when there is none.
    public static func read(_ file: URL, missing: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: file.path),
            let secret = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !secret.isEmpty
        else {
            throw FerryError(.daemonUnreachable, missing)
        }
        return secret
    }

    /// `byteCount` random bytes as lower-case hex (tokens, login codes, session ids).
    public static func randomHex(byteCount: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<byteCount).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
    }

    /// Reads the secret, creating it when missing.
    /// - Throws: ``FerryError`` `file_system` when the file cannot be written, or Foundation's
    ///   error when its folder cannot be created.
    public static func loadOrCreate(_ file: URL, in folder: URL) throws -> String {
        if let secret = try? read(file, missing: "") { return secret }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let secret = randomHex(byteCount: 32)
        let fd = open(file.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return try read(file, missing: "") }  // Another process made it first.
            throw FerryError(.fileSystem, "Could not create \(file.path): \(String(cString: strerror(errno))).")
        }
        defer { close(fd) }
        let bytes = Array((secret + "\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count, fsync(fd) == 0 else {
            throw FerryError(.fileSystem, "Could not write \(file.path): \(String(cString: strerror(errno))).")
        }
        return secret
    }
}
