import NIOCore
import NIOPosix
import Testing

@testable import FerryCore

@Suite struct EventLoopExecutorTests {
    /// Nonisolated code under the preference runs on the loop, also after it resumes from a
    /// suspension, and in child tasks (the worker's stop race and idle watchdog).
    @Test func nonisolatedCodeRunsOnTheLoopAcrossSuspensions() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let onLoop = await withTaskExecutorPreference(EventLoopExecutor(loop)) {
            var seen = [loop.inEventLoop]
            try? await Task.sleep(for: .milliseconds(5))
            seen.append(loop.inEventLoop)
            await Task.yield()
            seen.append(loop.inEventLoop)
            seen.append(await withTaskGroup(of: Bool.self) { children in
                children.addTask { loop.inEventLoop }
                return await children.next()!
            })
            return seen
        }
        #expect(onLoop == [true, true, true, true])
        #expect(!loop.inEventLoop)
    }

    /// AsyncHTTPClient asks its group for `any()` loop to connect on: from the loop's own thread,
    /// that is the loop itself, so the connection and its body's consumer share one thread.
    @Test func theGroupHandsOutThePreferredLoop() async throws {
        let group = MultiThreadedEventLoopGroup.singleton  // AsyncHTTPClient's, as in the daemon
        for loop in [group.next(), group.next()] {
            let chosen = await withTaskExecutorPreference(EventLoopExecutor(loop)) { group.any() }
            #expect(chosen === loop)
        }
    }
}
