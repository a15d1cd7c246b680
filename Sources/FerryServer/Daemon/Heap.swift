import Foundation

#if canImport(Glibc)
import CMalloc
import Glibc
#endif

/// The daemon's side of glibc's malloc. A burst of work (subscribing to a 20,000-episode feed and
/// listing it) left over 120 MiB resident in the allocator's arenas with 4 MiB of it in use: malloc
/// keeps what it freed for later, and glibc raises its threshold for giving large blocks their
/// own mapping each time one is freed, so the next ones land in the arenas and stay there.
/// bench/reports/2026-11-feeds.md ("A long feed in the daemon") has the measurements.
/// `ferry serve` calls ``configureForDaemon()`` at start; ``HeapTrimmer`` calls ``trim()``.
package enum Heap {
    /// Blocks of 4 MiB and more (a feed document, a long list's JSON) get their own mapping,
    /// which goes back to the system when they are freed; setting it also stops glibc from
    /// raising it. Smaller blocks stay in the arenas, whose free space ``trim()`` gives back. The
    /// trim threshold stays glibc's (128 KiB): raised to 8 MiB, the daemon kept more memory
    /// during a download (bench/reports/2026-11-feeds.md, "A long feed in the daemon").
    package static func configureForDaemon() {
        #if canImport(Glibc)
        _ = mallopt(M_MMAP_THRESHOLD, 4 << 20)
        #endif
    }

    /// Gives the whole free pages inside malloc's arenas back to the system.
    static func trim() {
        #if canImport(Glibc)
        _ = malloc_trim(0)
        #endif
    }

    /// Resident memory that is not a mapped file (heap, stacks, buffers), from /proc/self/statm;
    /// nil where there is none.
    static func residentAnonymousBytes() -> Int? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let pages = statm.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard pages.count >= 3 else { return nil }
        return (pages[1] - pages[2]) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
