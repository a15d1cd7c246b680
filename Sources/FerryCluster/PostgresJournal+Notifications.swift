import FerryCore
import FerryKit
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Committed events reach every member: NOTIFY on commit, one LISTEN per member, read in order.
extension PostgresJournal {
    package func onCommit(_ handler: @escaping @Sendable (TransferEvent) -> Void) {
        handlers.withLock { $0.append(handler) }
        listener.withLock { listener in
            guard listener == nil else { return }
            listener = Task { await self.listen() }
        }
    }

    /// LISTENs for commits with events and hands the new ones over, in `seq` order; a lost
    /// connection is opened again (what was missed meanwhile is read then). Events are also
    /// looked for every second, should a notification be lost.
    func listen() async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: Self.channel) { notifications in
                        await self.deliver()
                        // A burst of notifications (one per commit) is one read: they wake the
                        // reader, which reads whatever is new when it gets to it.
                        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask {
                                for try await _ in notifications { wake.yield() }
                            }
                            group.addTask {
                                for await _ in wakes { await self.deliver() }
                            }
                            group.addTask {
                                while !Task.isCancelled {
                                    try await Task.sleep(for: .seconds(1))
                                    wake.yield()
                                }
                            }
                            try await group.next()
                            group.cancelAll()
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("journal LISTEN lost; again in a second", metadata: ["error": "\(String(reflecting: error))"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Reads and hands over the events past the last one delivered.
    func deliver() async {
        let after = delivered.withLock { $0 }
        guard let events = try? await events(session: nil, after: after, limit: 10_000), let last = events.last?.seq else { return }
        // Only one delivery at a time moves the mark; a concurrent one that read the same
        // events hands over none of them twice.
        let fresh = delivered.withLock { mark -> [TransferEvent] in
            let fresh = events.filter { ($0.seq ?? 0) > mark }
            mark = max(mark, last)
            return fresh
        }
        let handlers = handlers.withLock { $0 }
        for event in fresh { for handler in handlers { handler(event) } }
    }
}
