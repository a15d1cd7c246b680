import Logging
import ServiceLifecycle

/// Gives memory back once freed memory has piled up (see ``Heap``). Every `interval` it reads the
/// daemon's resident anonymous memory; when that has grown by more than `slack` since the last
/// trim (or the start), it trims, and the level after the trim becomes the new mark. Memory
/// that is in use is not given back, so a daemon that grew for good trims once, not each time.
struct HeapTrimmer: Service {
    var interval: Duration = .seconds(30)
    var slack = 16 << 20
    let clock: any Clock<Duration>
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var mark = Heap.residentAnonymousBytes() ?? 0
            while !Task.isCancelled {
                try await clock.sleep(for: interval, tolerance: nil)
                guard let before = Heap.residentAnonymousBytes(), before > mark + slack else { continue }
                Heap.trim()
                mark = Heap.residentAnonymousBytes() ?? before
                logger.debug("gave memory back", metadata: ["heap.before": "\(before >> 20) MiB", "heap.after": "\(mark >> 20) MiB"])
            }
        }
    }
}
