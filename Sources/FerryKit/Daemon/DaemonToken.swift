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
        guard let data = FileManager.default.contents(atPath: paths.token.path),
            let token = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty
        else {
            throw FerryError(.daemonUnreachable, "No API token at \(paths.token.path); start the daemon with `ferry serve`.")
        }
        return token
    }

    /// Reads the token, creating it (mode 0600, created exclusively) when missing.
    /// - Throws: ``FerryError`` `file_system` when the token file cannot be written, or
    ///   Foundation's error when the state folder cannot be created.
    public static func loadOrCreate(_ paths: FerryPaths) throws -> String {
        if let token = try? read(paths) { return token }
        try FileManager.default.createDirectory(at: paths.state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var generator = SystemRandomNumberGenerator()
        let token = (0..<32).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
        let fd = open(paths.token.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return try read(paths) }  // Another process made it first.
            throw FerryError(.fileSystem, "Could not create \(paths.token.path): \(String(cString: strerror(errno))).")
        }
        defer { close(fd) }
        let bytes = Array((token + "\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count, fsync(fd) == 0 else {
            throw FerryError(.fileSystem, "Could not write \(paths.token.path): \(String(cString: strerror(errno))).")
        }
        return token
    }
}
