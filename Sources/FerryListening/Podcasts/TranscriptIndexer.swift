import FerryCore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Fetches and indexes new episodes' transcripts in the background, so a search finds what
/// was said without anyone opening them first: works through what waits, then sleeps until a
/// refresh brings episodes (``PodcastLibrary/transcriptsWaiting``) or `idle` passes (failures
/// to try again, another member's episodes in a cluster).
package struct TranscriptIndexer: Service {
    let podcasts: PodcastLibrary
    let idle: Duration
    let clock: any Clock<Duration>
    let logger: Logger

    package init(podcasts: PodcastLibrary, idle: Duration = .seconds(600), clock: any Clock<Duration> = ContinuousClock(), logger: Logger) {
        self.podcasts = podcasts
        self.idle = idle
        self.clock = clock
        self.logger = logger
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                var claimed = 0
                do {
                    claimed = try await podcasts.indexTranscripts()
                } catch {
                    logger.warning("indexing transcripts failed", metadata: ["error": "\(error)"])
                }
                if claimed == 0 { await podcasts.transcriptsWaiting.wait(upTo: idle, clock: clock) }
            }
        }
    }
}

/// A nudge that new work may wait: many nudges while nobody waits make one wake.
package final class WorkSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    package init() {}

    package func signal() {
        let waiter = state.withLock { state in
            defer { state.waiter = nil }
            if state.waiter == nil { state.pending = true }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns at the next signal (or one given since the last wait), after `duration`, or when
    /// the task is cancelled.
    func wait(upTo duration: Duration, clock: any Clock<Duration>) async {
        let timer = Task { [self] in
            if (try? await clock.sleep(for: duration, tolerance: .seconds(1))) != nil { signal() }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            signal()
        }
        timer.cancel()
    }
}
