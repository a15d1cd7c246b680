import Foundation
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// `daemon.log` (a detached daemon's standard output and error) kept under a size: past
/// `limit` it becomes `daemon.log.1` (the one before, `.2`; older ones go) and a new
/// `daemon.log` takes its place on the same descriptors, so every later line lands there.
/// Nothing happens when those descriptors are not that file: under systemd (journald) or in a
/// terminal, rotation is theirs.
enum LogRotation {
    /// - Returns: true when it rotated.
    @discardableResult
    static func rotateIfNeeded(_ path: String, limit: Int64, keep: Int, descriptors: [Int32] = [STDOUT_FILENO, STDERR_FILENO]) -> Bool {
        var file = stat()
        guard stat(path, &file) == 0, Int64(file.st_size) > limit else { return false }
        let ours = descriptors.filter { descriptor in
            var open = stat()
            return fstat(descriptor, &open) == 0 && open.st_ino == file.st_ino && open.st_dev == file.st_dev
        }
        guard !ours.isEmpty, keep >= 1 else { return false }
        for n in stride(from: keep - 1, through: 1, by: -1) { rename("\(path).\(n)", "\(path).\(n + 1)") }
        guard rename(path, "\(path).1") == 0 else { return false }
        let fresh = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fresh >= 0 else { return false }
        for descriptor in ours { dup2(fresh, descriptor) }
        close(fresh)
        return true
    }
}

/// Checks `daemon.log` every minute while the daemon runs.
struct LogRotationService: Service {
    let path: String
    var limit: Int64 = 10 << 20
    var keep = 2

    func run() async throws {
        while !Task.isCancelled {
            LogRotation.rotateIfNeeded(path, limit: limit, keep: keep)
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(60)) }
            } catch {
                return
            }
        }
    }
}
