import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization

extension BackgroundSession {
    /// The session's events, oldest first, for as long as you iterate: first every journaled
    /// event the session has not acknowledged (what happened while your program was not
    /// running), then live events as they happen. The analogue of a background session's
    /// delegate callbacks.
    ///
    /// - One consumer at a time. Starting a new iteration (or ``missedEvents()``) ends the one
    ///   under way: it returns nil instead of its next event (at the latest at the daemon's next
    ///   keep-alive, or at once if its task is cancelled). The new iteration continues after the
    ///   last event the old one delivered, so within one session object every journaled event
    ///   is delivered once.
    /// - A new session object (the next run of your program) starts after the session's last
    ///   acknowledged event, so it receives what was delivered but never acknowledged again.
    ///   Call ``acknowledge(through:)`` once an event is handled.
    /// - A dropped connection or a daemon restart is invisible: the iteration reconnects (with
    ///   `Last-Event-ID`, starting the daemon if the configuration allows) and continues where
    ///   it stopped, losing and repeating nothing but live progress.
    /// - It ends (returns nil) when its task is cancelled, and throws ``FerryError`` only when
    ///   the daemon refuses it for good (`unauthorized`, `invalid_request`). While no daemon
    ///   answers, it keeps trying, at most two seconds apart.
    public var events: Events { Events(session: self) }

    /// The session's events: an endless sequence of ``DownloadEvent``. See
    /// ``BackgroundSession/events``.
    public struct Events: AsyncSequence, Sendable {
        /// Each element is one event of the session.
        public typealias Element = DownloadEvent
        /// Only ``FerryError`` is thrown, when the daemon refuses the stream for good.
        public typealias Failure = any Error

        let session: BackgroundSession

        /// Starts an iteration, which becomes the session's one consumer of events when it first
        /// asks for one.
        public func makeAsyncIterator() -> Iterator {
            Iterator(session: session)
        }

        /// Reads the event stream only as you ask for events, so a slow consumer piles nothing up
        /// in memory: the journaled events wait in the daemon's journal.
        public struct Iterator: AsyncIteratorProtocol {
            let session: BackgroundSession
            private var consumer: Int?
            private var body: HTTPClientResponse.Body.AsyncIterator?
            private var decoder = EventStreamDecoder()
            private var pending: [DownloadEvent] = []
            /// The newest journaled event received: where a reconnection continues.
            private var received: Int64?
            private var retryDelay = Duration.milliseconds(100)
            private var ended = false

            init(session: BackgroundSession) {
                self.session = session
            }

            /// The next event, waiting for it as long as it takes; nil once ended.
            public mutating func next() async throws -> DownloadEvent? {
                guard !ended else { return nil }
                let consumer: Int
                if let current = self.consumer {
                    consumer = current
                } else {
                    (consumer, received) = session.beginConsumer()
                    self.consumer = consumer
                }
                while true {
                    guard !Task.isCancelled, session.isCurrent(consumer) else { return end() }
                    if !pending.isEmpty {
                        let event = pending.removeFirst()
                        guard session.deliver([event], consumer: consumer) else { return end() }
                        return event
                    }
                    do {
                        if body == nil {
                            body = try await session.openEventStream(after: received).makeAsyncIterator()
                            decoder = EventStreamDecoder()
                            retryDelay = .milliseconds(100)
                        }
                        guard let chunk = try await body?.next() else {
                            throw FerryError(.daemonUnreachable, "The daemon closed the event stream.")
                        }
                        for event in decoder.events(in: chunk).compactMap(DownloadEvent.init) {
                            if let seq = event.seq {
                                if let received, seq <= received { continue }
                                received = seq
                            }
                            pending.append(event)
                        }
                    } catch {
                        body = nil
                        if Task.isCancelled { return end() }
                        // Look for the daemon afresh: it may have restarted on another port.
                        session.forgetDaemon()
                        if let failure = error as? FerryError, [.unauthorized, .invalidRequest].contains(failure.code) {
                            ended = true
                            throw failure
                        }
                        // Daemon gone or restarting: wait a little, then reconnect.
                        do { try await Task.sleep(for: retryDelay) } catch { return end() }
                        retryDelay = Swift.min(retryDelay * 2, .seconds(2))
                    }
                }
            }

            private mutating func end() -> DownloadEvent? {
                ended = true
                body = nil
                pending = []
                return nil
            }
        }
    }

    /// The journaled events the session missed, oldest first, without waiting for new ones:
    /// what happened since the last acknowledged event (or since the last event this object
    /// delivered). The analogue of the burst of delegate calls iOS makes when it relaunches an
    /// app for its background session, ending with `urlSessionDidFinishEvents`.
    ///
    /// Acknowledge them (``acknowledge(through:)``) once handled. A later iteration of
    /// ``events`` continues after them.
    ///
    /// The daemon marks the end of its replay, so the result is exactly the journaled events it
    /// held for the session when the stream opened (and any journaled while it replayed).
    /// - Throws: ``FerryError`` `daemon_unreachable` when the daemon cannot be reached, closes
    ///   the stream midway, or sends nothing for ``Configuration/replayStallLimit`` before the end
    ///   of its replay (nothing is delivered then; call again).
    public func missedEvents() async throws -> [DownloadEvent] {
        let (consumer, after) = beginConsumer()
        let body = try await withDaemon { client -> HTTPClientResponse.Body? in
            let info = try await client.session(identifier)
            // The newest event of any session: nothing newer than the cursor, nothing to replay.
            guard info.lastEventSeq > (after ?? info.acknowledgedSeq) else { return nil }
            return try await client.openEventStream(session: identifier, after: after).body
        }
        guard let body else { return [] }
        let events = try await Self.replay(from: body, stallLimit: configuration.replayStallLimit)
        guard deliver(events, consumer: consumer) else {
            throw FerryError.invalidState("A newer consumer of the session's events took over while missedEvents() was reading.")
        }
        return events
    }

    /// The journaled events at the start of a stream, up to its `replayed` event; fails when no
    /// bytes come for `stallLimit`.
    static func replay(from body: HTTPClientResponse.Body, stallLimit: Duration) async throws -> [DownloadEvent] {
        let lastNews = LastNews()
        return try await withThrowingTaskGroup(of: [DownloadEvent].self) { group in
            group.addTask {
                var decoder = EventStreamDecoder()
                var events: [DownloadEvent] = []
                for try await chunk in body {
                    lastNews.time.withLock { $0 = .now }
                    for item in decoder.feed(chunk) {
                        switch item {
                        case .replayed: return events
                        case .event(let event, _): if event.seq != nil, let event = DownloadEvent(event) { events.append(event) }
                        // Events older than the daemon keeps (90 days unacknowledged) are gone, as
                        // iOS drops them; the transfers' list holds their state.
                        case .resync, .unknown: continue
                        }
                    }
                }
                throw FerryError(.daemonUnreachable, "The daemon closed the event stream.")
            }
            group.addTask {
                while ContinuousClock.now - lastNews.time.withLock({ $0 }) < stallLimit {
                    try await Task.sleep(for: stallLimit / 10)
                }
                throw FerryError(.daemonUnreachable, "The daemon sent nothing for \(stallLimit) while replaying the session's events.")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// When the replay last brought bytes, shared by its reader and its watchdog.
    private final class LastNews: Sendable {
        let time = Mutex(ContinuousClock.now)
    }

    // MARK: Delivery bookkeeping

    /// Makes the caller the session's one consumer of events.
    /// - Returns: its number, and the event it starts after.
    func beginConsumer() -> (consumer: Int, after: Int64?) {
        state.withLock { state in
            state.consumer += 1
            return (state.consumer, state.cursor)
        }
    }

    func isCurrent(_ consumer: Int) -> Bool {
        state.withLock { $0.consumer == consumer }
    }

    /// Records that `consumer` hands `events` to the program, unless a newer consumer took over.
    func deliver(_ events: [DownloadEvent], consumer: Int) -> Bool {
        state.withLock { state in
            guard state.consumer == consumer else { return false }
            if let seq = events.compactMap(\.seq).max() { state.cursor = max(state.cursor ?? 0, seq) }
            return true
        }
    }

    func openEventStream(after: Int64?) async throws -> HTTPClientResponse.Body {
        try await withDaemon { try await $0.openEventStream(session: identifier, after: after).body }
    }
}
