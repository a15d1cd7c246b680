import Logging
import ServiceLifecycle

/// Gives memory back once freed memory has piled up (see ``Heap``): every `interval` it shows
/// the daemon's resident anonymous memory to a ``HeapMark``, and trims when the mark says so.
struct HeapTrimmer: Service {
    var interval: Duration = .seconds(30)
    var slack = 16 << 20
    let clock: any Clock<Duration>
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var mark = HeapMark(level: Heap.residentAnonymousBytes() ?? 0, slack: slack)
            while !Task.isCancelled {
                try await clock.sleep(for: interval, tolerance: nil)
                guard let before = Heap.residentAnonymousBytes(), mark.wantsTrim(at: before) else { continue }
                Heap.trim()
                let after = Heap.residentAnonymousBytes() ?? before
                mark.trimmed(to: after)
                logger.debug("gave memory back", metadata: ["heap.before": "\(before >> 20) MiB", "heap.after": "\(after >> 20) MiB"])
            }
        }
    }
}

/// When to trim: once the resident anonymous memory is more than `slack` above its lowest level
/// since the last trim (or the start). Memory in use is not given back, so after a trim the
/// level it left is the new mark: a daemon that grew for good trims once, not every time.
struct HeapMark {
    private(set) var level: Int
    let slack: Int

    init(level: Int, slack: Int) {
        self.level = level
        self.slack = slack
    }

    /// Whether memory at `bytes` calls for a trim; the mark follows the memory down.
    mutating func wantsTrim(at bytes: Int) -> Bool {
        if bytes > level + slack { return true }
        level = min(level, bytes)
        return false
    }

    mutating func trimmed(to bytes: Int) {
        level = bytes
    }
}
