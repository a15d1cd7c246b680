import Dispatch
import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// One daemon per state folder, and a restart right after `kill -9` that does not trip over the
/// killed daemon's last threads.
@Suite struct DaemonLockTests {
    private func paths(_ home: URL) -> FerryPaths {
        FerryPaths(library: home.appendingPathComponent("library"), state: home.appendingPathComponent("state"))
    }

    private func recordOwner(pid: Int32, _ paths: FerryPaths) throws {
        let info = DaemonInfo(url: "http://127.0.0.1:1", pid: pid, version: "test", startedAt: Date())
        try FerryJSON.encoder().encode(info).write(to: paths.daemonInfo)
    }

    /// A daemon killed with `kill -9` is a zombie (or gone) while a thread of it may still be
    /// finishing an fsync, and it holds the lock until that thread exits. Seen in the resume
    /// benchmark: one restart in six failed with "another daemon is already running".
    @Test func waitsForTheLockOfADaemonThatIsStillExiting() async throws {
        try await withTemporaryDirectory { home in
            let paths = paths(home)
            let dying = Mutex<DaemonLock?>(try DaemonLock(paths: paths))
            let zombie = try ChildProcess.spawn("/bin/true", arguments: [])
            try await eventually("the child to exit") { !ChildProcess.isAlive(zombie) }
            try recordOwner(pid: zombie, paths)
            // Its last thread lets go a moment later.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { dying.withLock { $0 = nil } }
            let lock = try DaemonLock(paths: paths)
            #expect(dying.withLock { $0 == nil })
            withExtendedLifetime(lock) {}
            _ = await ChildProcess.wait(zombie)
        }
    }

    @Test func refusesAtOnceWhileTheOwnerIsAlive() async throws {
        try await withTemporaryDirectory { home in
            let paths = paths(home)
            let running = try DaemonLock(paths: paths)
            try recordOwner(pid: getpid(), paths)
            let error = #expect(throws: FerryError.self) { try DaemonLock(paths: paths) }
            #expect(error?.code == .daemonStartFailed)
            #expect(error?.message.contains("Another Ferry daemon is already running") == true)
            #expect(error?.message.contains("pid \(getpid())") == true)
            withExtendedLifetime(running) {}
        }
    }
}
