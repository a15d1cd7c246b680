import NIOCore

/// Runs a task's nonisolated code on one NIO event loop, so that a download's body loop runs
/// on the thread that reads its connection.
///
/// AsyncHTTPClient hands a response body over one buffer at a time (its back-pressure
/// watermarks are 1 and 1): the event loop reads (up to 256 KiB, see
/// ``TransferEngine/connectionReadSize``), wakes the consumer, and reads
/// again only when the consumer asks. With the consumer on Swift's cooperative threads every
/// buffer costs two cross-thread wake-ups (a futex and an eventfd); on the loop's own thread
/// it is a local enqueue. The request is made under the same preference: AsyncHTTPClient asks
/// its group for `any()` loop, which is the current one, and opens a new connection there (an
/// idle connection it reuses may be on another loop; the hand-over then crosses threads as
/// before, and nothing else changes).
final class EventLoopExecutor: TaskExecutor {
    let loop: any EventLoop

    init(_ loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
