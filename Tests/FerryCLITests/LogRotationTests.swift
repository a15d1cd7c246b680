import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import ferry

/// daemon.log rotated by size on the descriptors that write it: later writes land in the new
/// file, the old one is kept as .1 (and .2), older ones go; a file that is not ours is left.
@Suite struct LogRotationTests {
    @Test func aLogPastItsLimitMovesAsideAndTheSameDescriptorWritesTheNewOne() async throws {
        try await withTemporaryDirectory { folder in
            let path = folder.appendingPathComponent("daemon.log").path
            let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            defer { close(descriptor) }
            func write(_ text: String) { _ = text.withCString { Glibc.write(descriptor, $0, strlen($0)) } }
            func read(_ suffix: String) -> String { (try? String(contentsOfFile: path + suffix, encoding: .utf8)) ?? "" }

            write("first\n")
            #expect(!LogRotation.rotateIfNeeded(path, limit: 100, keep: 2, descriptors: [descriptor]), "under the limit")
            for round in 1...3 {
                write(String(repeating: "\(round)", count: 200) + "\n")
                #expect(LogRotation.rotateIfNeeded(path, limit: 100, keep: 2, descriptors: [descriptor]))
                write("after \(round)\n")
                #expect(read("") == "after \(round)\n", "the same descriptor writes the new file")
            }
            #expect(read(".1").hasPrefix("after 2\n3333"))
            #expect(read(".2").hasPrefix("after 1\n2222"))
            #expect(!FileManager.default.fileExists(atPath: path + ".3"), "older ones go")
            var mode = stat()
            stat(path, &mode)
            #expect(mode.st_mode & 0o777 == 0o600)

            // A big file nobody here writes through these descriptors: left alone.
            let other = folder.appendingPathComponent("other.log").path
            try Data(repeating: 65, count: 500).write(to: URL(fileURLWithPath: other))
            #expect(!LogRotation.rotateIfNeeded(other, limit: 100, keep: 2, descriptors: [descriptor]))
            #expect(!FileManager.default.fileExists(atPath: other + ".1"))
        }
    }
}
