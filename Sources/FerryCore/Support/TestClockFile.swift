#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// The real time plus the seconds a file holds: for tests that live a year of retention in
/// minutes (`FERRY_TEST_CLOCK_FILE`, read by `ferry serve` only, never shown in `--help`).
///
/// The file is read again only when its modification time or size changes: asking the time is
/// a `stat`. A missing or unreadable file adds nothing.
package final class TestClockFile: Sendable {
    /// The environment variable that names the file.
    package static let variable = "FERRY_TEST_CLOCK_FILE"

    private let path: String
    private let cache = Mutex<(stamp: [Int], offset: TimeInterval)>(([], 0))

    package init(path: String) {
        self.path = path
    }

    /// The file `FERRY_TEST_CLOCK_FILE` names, if it is set and not empty.
    package convenience init?(environment: [String: String]) {
        guard let path = environment[Self.variable], !path.isEmpty else { return nil }
        self.init(path: path)
    }

    /// The real time moved ahead by the file's seconds.
    package func now() -> Date {
        Date().addingTimeInterval(offset())
    }

    /// The file's seconds (a decimal number), read again when the file changed.
    package func offset() -> TimeInterval {
        var info = stat()
        let stamp = stat(path, &info) == 0 ? [Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec), Int(info.st_size)] : []
        if let known = cache.withLock({ $0.stamp == stamp ? $0.offset : nil }) { return known }
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let offset = TimeInterval(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        cache.withLock { $0 = (stamp, offset) }
        return offset
    }
}
