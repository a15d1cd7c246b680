#if canImport(Glibc)
import Glibc
#endif
import FerryKit
import Testing

/// A child starts with every signal at its default even though this process ignores SIGTERM
/// (as ServiceLifecycle makes it): a hook or helper Ferry starts can be stopped with SIGTERM.
@Suite struct ChildProcessTests {
    @Test func aChildDoesNotInheritIgnoredSignals() async throws {
        signal(SIGTERM, SIG_IGN)  // What any ServiceGroup in this test process does anyway.
        let (status, report) = try await ChildProcess.run("/bin/sh", arguments: ["-c", "grep -E '^Sig(Ign|Blk)' /proc/self/status >&2"])
        #expect(status == 0)
        let masks = report.split(separator: "\n").map { $0.split(separator: "\t").last.map(String.init) ?? "" }
        #expect(masks.count == 2, "\(report)")
        for mask in masks {
            let bits = UInt64(mask, radix: 16) ?? .max
            #expect(bits & (1 << (UInt64(SIGTERM) - 1)) == 0, "\(report)")
        }
    }

    @Test func aChildStoppedWithSIGTERMSaysSo() async throws {
        signal(SIGTERM, SIG_IGN)
        let pid = try ChildProcess.spawn("/bin/sleep", arguments: ["30"], output: .null)
        kill(pid, SIGTERM)
        #expect(await ChildProcess.wait(pid) == 128 + SIGTERM)
    }
}

extension ChildProcessTests {
    /// A descriptor this process opened without close-on-exec does not reach the child.
    @Test func aChildGetsOnlyItsStandardDescriptors() async throws {
        let leaky = open("/dev/null", O_RDONLY)  // No O_CLOEXEC.
        defer { close(leaky) }
        let (status, report) = try await ChildProcess.run("/bin/sh", arguments: ["-c", "ls /proc/self/fd >&2"])
        #expect(status == 0)
        let open = Set(report.split(separator: "\n").compactMap { Int32($0) })
        #expect(!open.contains(leaky), "\(report)")
    }
}

extension ChildProcessTests {
    /// Both streams come back whole and apart, however much of each the child writes (a child
    /// filling one pipe while the other is read would otherwise hang).
    @Test func captureKeepsOutputAndErrorApart() throws {
        let script = "head -c 300000 /dev/zero | tr '\\0' o; head -c 200000 /dev/zero | tr '\\0' e >&2; exit 3"
        let result = try ChildProcess.capture("/bin/sh", arguments: ["-c", script])
        #expect(result.status == 3)
        #expect(result.output.count == 300_000 && result.output.allSatisfy { $0 == "o" })
        #expect(result.error.count == 200_000 && result.error.allSatisfy { $0 == "e" })
    }

    @Test func captureOfAMissingProgramThrows() {
        #expect(throws: FerryError.self) { try ChildProcess.capture("/nonexistent/program", arguments: []) }
    }
}
