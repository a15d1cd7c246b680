#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import Foundation

/// An exclusive `flock` on `daemon.lock`, held for the daemon's life: two daemons never share
/// one journal. The kernel releases it when the process dies, even by `kill -9` — but only once
/// its last thread has exited, which can take a while after the process is reported dead (a
/// thread finishing an fsync). So while the daemon that `daemon.json` names is gone or a
/// zombie, a new daemon waits for the lock (up to `dyingOwnerWait`) instead of failing.
package final class DaemonLock: Sendable {
    private let fd: Int32

    /// How long a new daemon waits for a dead daemon's lock to be released.
    static let dyingOwnerWait = Duration.seconds(10)

    /// - Throws: a clear error when another daemon holds the lock.
    package init(paths: FerryPaths) throws {
        try FileManager.default.createDirectory(at: paths.state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        fd = open(paths.daemonLock.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw FerryError(.fileSystem, "Could not open \(paths.daemonLock.path): \(String(cString: strerror(errno))).")
        }
        var owner = Self.owner(paths)
        let deadline = ContinuousClock.now + Self.dyingOwnerWait
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let ownerIsDying = owner.map { !ChildProcess.isAlive($0.pid) } ?? true
            if ownerIsDying, ContinuousClock.now < deadline {
                usleep(20_000)
                owner = Self.owner(paths)
                continue
            }
            close(fd)
            throw FerryError(
                .daemonStartFailed,
                "Another Ferry daemon is already running for \(paths.state.path)"
                    + (owner.map { " (pid \($0.pid), \($0.url))" } ?? "") + "; `ferry stop` stops it."
            )
        }
    }

    /// The daemon `daemon.json` names (the last one that started), if any.
    private static func owner(_ paths: FerryPaths) -> DaemonInfo? {
        (try? Data(contentsOf: paths.daemonInfo)).flatMap { try? FerryJSON.decoder().decode(DaemonInfo.self, from: $0) }
    }

    deinit {
        close(fd)
    }
}
