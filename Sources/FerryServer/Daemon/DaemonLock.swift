#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import Foundation

/// An exclusive `flock` on `daemon.lock`, held for the daemon's life: two daemons never share
/// one journal. The kernel releases it when the process dies, even by `kill -9`.
public final class DaemonLock: Sendable {
    private let fd: Int32

    /// - Throws: a clear error when another daemon holds the lock.
    public init(paths: FerryPaths) throws {
        try FileManager.default.createDirectory(at: paths.state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        fd = open(paths.daemonLock.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw FerryError(.fileSystem, "Could not open \(paths.daemonLock.path): \(String(cString: strerror(errno))).")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            let owner = (try? Data(contentsOf: paths.daemonInfo)).flatMap { try? FerryJSON.decoder().decode(DaemonInfo.self, from: $0) }
            throw FerryError(
                .daemonStartFailed,
                "Another Ferry daemon is already running for \(paths.state.path)"
                    + (owner.map { " (pid \($0.pid), \($0.url))" } ?? "") + "; `ferry stop` stops it."
            )
        }
    }

    deinit {
        close(fd)
    }
}
