#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// The real `ferry serve` killed with SIGKILL mid-download and started again by the next
/// `ferry` command: every file completes from the bytes on disk with the right SHA-256, and no
/// transfer is lost or duplicated.
@Suite(.serialized) struct DaemonCrashTests {
    @Test func killNineMidDownloadThenResume() async throws {
        // Each response is held at 5,000,000 bytes until the daemon is dead, so it dies mid-way
        // however slow the machine; the throttle puts a checkpoint (every 2 s) before the hold.
        let files = (1...3).map { Origin.File(data: Origin.bytes(8_000_000, seed: UInt64($0)), bytesPerSecond: 2_000_000) }
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            for (n, file) in files.enumerated() {
                origin.serve("/big\(n).bin", file)
                origin.script("/big\(n).bin", [.holdAfter(5_000_000, gate)])
            }
            try await CommandRunner.withHome { home in
                let urls = files.indices.map { base.appendingPathComponent("big\($0).bin").absoluteString }
                // One connection each: this is about a single stream's bytes after the last checkpoint.
                let queued = try await CommandRunner.ferry(["get", "--no-wait", "--json", "-x", "1"] + urls, home: home)
                #expect(queued.status == 0, "\(queued)")
                let ids = try FerryJSON.decoder().decode([Transfer].self, from: Data(queued.stdout.utf8)).map(\.id)

                // Until each is well past its first checkpoint (at most 2 s apart).
                try await eventually("most of every file", timeout: .seconds(60)) {
                    let list = try await CommandRunner.ferry(["ls", "--json"], home: home)
                    let transfers = try FerryJSON.decoder().decode([Transfer].self, from: Data(list.stdout.utf8))
                    return transfers.count == 3 && transfers.allSatisfy { $0.bytesReceived >= 5_000_000 }
                }
                let victim = try #require(CommandRunner.daemonInfo(home: home))
                #expect(kill(victim.pid, SIGKILL) == 0)
                try await eventually("the daemon to die") { !ChildProcess.isAlive(victim.pid) }
                gate.open()
                let requestsBefore = origin.requests.count
                // What the killed daemon had written: all of it is in the page cache, and so kept.
                let written = try ids.map { id in
                    let part = home.appendingPathComponent("library/.partial/\(id).part").path
                    return try FileManager.default.attributesOfItem(atPath: part)[.size] as! Int64
                }

                // The next command starts a new daemon, which resumes on its own.
                for file in files.indices { origin.update("/big\(file).bin") { $0.bytesPerSecond = nil } }
                let list = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
                #expect(list.status == 0, "\(list)")
                let revived = try #require(CommandRunner.daemonInfo(home: home))
                #expect(revived.pid != victim.pid)
                let wait = try await CommandRunner.ferry(["wait", "--json"] + ids.map(String.init), home: home)
                #expect(wait.status == 0, "\(wait)")
                // Killed, the daemon left its mark: the next one checked the journal.
                let log = try String(contentsOf: home.appendingPathComponent("state/daemon.log"), encoding: .utf8)
                #expect(log.contains("the last stop was unclean: the journal was checked and is intact"), "\(log.suffix(3000))")

                let final = try FerryJSON.decoder().decode(
                    [Transfer].self, from: Data(try await CommandRunner.ferry(["ls", "--all", "--json"], home: home).stdout.utf8)
                )
                #expect(final.map(\.id) == ids, "no transfer lost or duplicated")
                for (transfer, file) in zip(final, files) {
                    #expect(transfer.state == .completed)
                    #expect(transfer.sha256 == file.sha256)
                    let onDisk = try Data(contentsOf: URL(fileURLWithPath: try #require(transfer.path)))
                    #expect(onDisk.sha256Hex == file.sha256)
                }
                // Each file was resumed with a Range request from where the disk left off.
                for n in files.indices {
                    let after = origin.requests.dropFirst(requestsBefore).filter { $0.path == "/big\(n).bin" }
                    let offset = after.first?.range.flatMap { Int($0.dropFirst(6).dropLast()) } ?? 0
                    // (Not all 5,000,000: what the daemon had gathered but not yet written died with it.)
                    #expect(offset > 0, "file \(n) resumed from a byte offset")
                    if FileManager.default.fileExists(atPath: "/proc/sys/kernel/random/boot_id") {
                        #expect(Int64(offset) == written[n], "file \(n) resumed from the end of what was written, not its last checkpoint")
                    }
                }
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: home.appendingPathComponent("library/.partial").path)
                #expect(leftovers.isEmpty)
            }
        }
    }

    @Test func sigtermCheckpointsAndTheNextDaemonResumesFromThere() async throws {
        let file = Origin.File(data: Origin.bytes(6_000_000), bytesPerSecond: 2_000_000)
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/f.bin", file)
            origin.script("/f.bin", [.holdAfter(1_000_000, gate)])  // until the daemon has stopped
            try await CommandRunner.withHome { home in
                let queued = try await CommandRunner.ferry(
                    ["get", "--no-wait", "--json", "-x", "1", base.appendingPathComponent("f.bin").absoluteString], home: home
                )
                let id = try FerryJSON.decoder().decode([Transfer].self, from: Data(queued.stdout.utf8))[0].id
                try await eventually("a million bytes", timeout: .seconds(60)) {
                    let list = try await CommandRunner.ferry(["ls", "--json"], home: home)
                    return try FerryJSON.decoder().decode([Transfer].self, from: Data(list.stdout.utf8)).first?.bytesReceived ?? 0 >= 1_000_000
                }
                let daemon = try #require(CommandRunner.daemonInfo(home: home))
                #expect(kill(daemon.pid, SIGTERM) == 0)
                try await eventually("a graceful exit", timeout: .seconds(30)) { !ChildProcess.isAlive(daemon.pid) }
                gate.open()
                #expect(CommandRunner.daemonInfo(home: home) == nil, "daemon.json removed on a clean stop")
                let part = home.appendingPathComponent("library/.partial/\(id).part")
                let partSize = try #require(try FileManager.default.attributesOfItem(atPath: part.path)[.size] as? Int)
                #expect(partSize == 1_000_000)
                let requestsBefore = origin.requests.count

                origin.update("/f.bin") { $0.bytesPerSecond = nil }
                let wait = try await CommandRunner.ferry(["wait", "--json", String(id)], home: home)
                #expect(wait.status == 0, "\(wait)")
                #expect(try FerryJSON.decoder().decode([Transfer].self, from: Data(wait.stdout.utf8))[0].sha256 == file.sha256)
                // It continued exactly from the checkpointed part file.
                #expect(origin.requests.dropFirst(requestsBefore).first?.range == "bytes=\(partSize)-")
                // A clean stop: the next start skipped the journal's check.
                let log = try String(contentsOf: home.appendingPathComponent("state/daemon.log"), encoding: .utf8)
                #expect(!log.contains("the last stop was unclean"), "\(log.suffix(3000))")
            }
        }
    }
}
