#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Watches the machine's network through rtnetlink (links, addresses, routes: the kernel tells,
/// nothing is polled) and tells ``NetworkChanges`` when something comes that may bring the
/// network back, so waiting transfers try again at once instead of at their next timer. News
/// comes in bursts (a link, then its address, then its routes): it is told at the burst's first
/// message, so a transfer tries at once, and again once the burst has been quiet for `settle`,
/// for one whose attempt came before the route it needed.
package struct NetworkWatcher: Service {
    let changes: NetworkChanges
    let settle: Duration
    let logger: Logger

    package init(changes: NetworkChanges, settle: Duration = .milliseconds(100), logger: Logger) {
        self.changes = changes
        self.settle = settle
        self.logger = logger
    }

    package func run() async throws {
        let socket: RouteSocket
        do {
            socket = try RouteSocket()
        } catch {
            // Not fatal: waiting transfers still try again on their timers (at most a minute apart).
            logger.warning("cannot watch the network; waiting transfers retry on their timers", metadata: ["error": "\(error)"])
            try? await gracefulShutdown()
            return
        }
        let (news, continuation) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(64))
        let reader = Thread {
            socket.read { messages in continuation.yield(messages.contains { $0.mayReconnect }) }
            continuation.finish()
        }
        reader.name = "ferry-netlink"
        reader.start()
        defer { socket.stop() }
        await withGracefulShutdownHandler {
            var burst = NewsBurst()
            var trailing: Task<Void, Never>?
            for await mayReconnect in news where mayReconnect {
                let now = ContinuousClock.now
                if burst.news(at: now, settle: settle) {
                    logger.debug("the network changed: waiting transfers try again")
                    changes.changed()
                }
                // Told again once the burst has been quiet for `settle`.
                trailing?.cancel()
                let (changes, settle) = (changes, settle)
                trailing = Task {
                    try? await Task.sleep(for: settle)
                    guard !Task.isCancelled else { return }
                    changes.changed()
                }
            }
            await trailing?.value
        } onGracefulShutdown: {
            socket.stop()
        }
    }
}

/// When news starts a burst: the first message after `settle` of quiet does.
struct NewsBurst {
    private var last: ContinuousClock.Instant?

    /// Records news at `now`; true when it starts a burst (and is told at once).
    mutating func news(at now: ContinuousClock.Instant, settle: Duration) -> Bool {
        defer { last = now }
        guard let last else { return true }
        return last.duration(to: now) >= settle
    }
}

/// A netlink socket subscribed to the route groups, read on a thread of its own (a blocking
/// `poll` on it and on a pipe that ``stop()`` writes to).
final class RouteSocket: @unchecked Sendable {
    private let descriptor: Int32
    private let wake: (read: Int32, write: Int32)
    private let stopped = Mutex(false)

    /// `struct sockaddr_nl` (linux/netlink.h).
    private struct NetlinkAddress {
        var family: UInt16 = 16  // AF_NETLINK
        var pad: UInt16 = 0
        var pid: UInt32 = 0
        var groups: UInt32
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        let descriptor = socket(16, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)  // AF_NETLINK, NETLINK_ROUTE
        guard descriptor >= 0 else { throw Failure(description: "socket(AF_NETLINK): \(String(cString: strerror(errno)))") }
        self.descriptor = descriptor
        var address = NetlinkAddress(groups: RouteMessage.groups)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<NetlinkAddress>.size)) }
        }
        var pipeEnds: [Int32] = [0, 0]
        guard bound == 0, pipe(&pipeEnds) == 0 else {
            let message = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "bind(netlink route groups): \(message)")
        }
        wake = (pipeEnds[0], pipeEnds[1])
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    }

    /// Reads until ``stop()``, handing each datagram's messages to `handle`. A lost datagram
    /// (`ENOBUFS`: the kernel had more news than the buffer) counts as news that may reconnect.
    func read(_ handle: ([RouteMessage]) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var polled = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        while !stopped.withLock({ $0 }) {
            guard poll(&polled, 2, -1) >= 0 || errno == EINTR else { break }
            if polled[1].revents != 0 { break }
            guard polled[0].revents != 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                handle(RouteMessage.parse(buffer[0..<count]))
            } else if count < 0, errno == ENOBUFS {
                handle([.link(index: 0, running: true)])
            } else if count < 0, errno != EAGAIN, errno != EINTR {
                break
            }
        }
    }

    deinit {
        close(descriptor)
        close(wake.read)
        close(wake.write)
    }

    /// Ends ``read(_:)``; safe to call more than once.
    func stop() {
        let first = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }
}
