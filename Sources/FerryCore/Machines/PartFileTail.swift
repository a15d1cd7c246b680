#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// What a starting daemon makes of the bytes of a part file past the journal's durable count.
///
/// A write that returned is in the kernel's page cache: killing the process, even with `kill -9`,
/// does not lose it, and the part file's length counts exactly the writes that returned. Only
/// losing the page cache (a power cut, a crash of the machine, a reboot) can leave a tail that was
/// never written out, or garbage. So while the machine has not restarted since the last daemon ran
/// (the same boot id), the whole file is trusted (it is fsynced, then journaled as durable); after
/// a restart, only what the journal says was fsynced is kept, in every part file at once, before
/// the new boot is recorded.
enum PartFileTail {
    /// The part file's length that recovery journals as durable.
    /// A file longer than the server's promised total is not trusted past the journal either:
    /// its bytes came from a response that broke its word, and the worker's own rules judge it.
    static func trusted(fileLength: Int64, journaled: Int64, total: Int64?, sameBoot: Bool) -> Int64 {
        guard sameBoot, fileLength <= total ?? fileLength else { return min(fileLength, journaled) }
        return fileLength
    }

    /// This boot's id; nil where the system does not say, and then no tail is trusted.
    static func currentBoot() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
    }
}
