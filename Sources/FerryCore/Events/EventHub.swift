import FerryModel
import Synchronization

/// Fans events out to live listeners (event streams). Journaled events come from the journal
/// after their transaction commits; live progress comes from the progress board.
///
/// Each subscription has a bounded buffer. A listener too slow to keep up loses messages
/// rather than growing the daemon's memory; it then sees ``Subscription/takeLag()`` return true
/// and re-reads what it missed from the journal.
package final class EventHub: Sendable {
    package enum Message: Sendable {
        case event(TransferEvent)
        /// Nothing happened for a while; streams send a keep-alive comment.
        case heartbeat
    }

    /// One listener's messages.
    package struct Subscription: AsyncSequence, Sendable {
        package typealias Element = Message
        let stream: AsyncStream<Message>
        let lag: Lag

        package func makeAsyncIterator() -> AsyncStream<Message>.Iterator { stream.makeAsyncIterator() }

        /// True once after messages were dropped for this listener.
        package func takeLag() -> Bool { lag.flag.withLock { flag in defer { flag = false }; return flag } }
    }

    final class Lag: Sendable {
        let flag = Mutex(false)
    }

    private struct Listener {
        var session: String?
        var continuation: AsyncStream<Message>.Continuation
        var lag: Lag
    }

    private struct State {
        var listeners: [Int: Listener] = [:]
        var nextKey = 0
        var closed = false
    }

    private let state = Mutex(State())
    private let bufferSize: Int

    package init(bufferSize: Int = 4096) {
        self.bufferSize = bufferSize
    }

    /// Listens to one session's events, or to every session's when `session` is nil.
    package func subscribe(session: String?) -> Subscription {
        let (stream, continuation) = AsyncStream.makeStream(of: Message.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let lag = Lag()
        let key: Int? = state.withLock { state in
            guard !state.closed else { return nil }
            let key = state.nextKey
            state.nextKey += 1
            state.listeners[key] = Listener(session: session, continuation: continuation, lag: lag)
            return key
        }
        if let key {
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.listeners.removeValue(forKey: key) }
            }
        } else {
            continuation.finish()
        }
        return Subscription(stream: stream, lag: lag)
    }

    /// Someone listens to this very session's events (not only to every session's, as the web
    /// app does): its program is running.
    package func hasListener(session: String) -> Bool {
        state.withLock { state in state.listeners.values.contains { $0.session == session } }
    }

    package func publish(_ event: TransferEvent) {
        send(.event(event), session: event.session)
    }

    package func heartbeat() {
        send(.heartbeat, session: nil)
    }

    private func send(_ message: Message, session: String?) {
        let targets = state.withLock { state in
            state.listeners.values.filter { session == nil || $0.session == nil || $0.session == session }
        }
        for target in targets {
            if case .dropped = target.continuation.yield(message) {
                target.lag.flag.withLock { $0 = true }
            }
        }
    }

    /// Ends every subscription; later ones end at once.
    package func close() {
        let listeners = state.withLock { state in
            state.closed = true
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener.continuation.finish() }
    }
}
