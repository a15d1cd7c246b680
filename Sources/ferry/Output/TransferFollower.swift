import FerryKit
import Foundation

/// Follows transfers through the daemon's event streams until each is completed, failed or
/// cancelled, drawing progress. A dropped connection or a restarted daemon is reconnected to
/// (the daemon started again if needed) and every transfer re-read, so nothing is missed.
struct TransferFollower {
    let connector: DaemonConnector

    /// - Parameter after: the journal sequence number the given states are current at.
    /// - Returns: the transfers in their final states.
    func follow(_ transfers: [Transfer], after seq: Int64) async throws -> [Transfer] {
        var view = ProgressView(transfers: transfers)
        view.draw(force: true)
        guard !view.allFinal else { return view.transfers }
        let items = merged(sessions: Set(transfers.map(\.session)), after: seq)
        var firstConnection = true
        for await item in items {
            switch item {
            case .connected:
                view.note = nil
                // After a reconnect the daemon may have moved on (or restarted): re-read all.
                if !firstConnection { try await refresh(&view, ids: view.ids) }
                firstConnection = false
            case .event(let event):
                if view.apply(event) { try await refresh(&view, ids: [event.transferId]) }
            case .disconnected:
                view.note = "reconnecting to the Ferry daemon…"
            }
            view.draw()
            if view.allFinal { break }
        }
        view.note = nil
        view.draw(force: true)
        return view.transfers
    }

    private func refresh(_ view: inout ProgressView, ids: Set<Int64>) async throws {
        let client = try await connector.connect()
        for id in ids.sorted() {
            do {
                view.replace(try await client.transfer(id))
            } catch let error as FerryError where error.code == .notFound {
                var removed = view.transfers.first { $0.id == id }!
                removed.state = .cancelled
                removed.error = error.info
                view.replace(removed)
            }
        }
    }

    /// One stream of the events of several sessions.
    private func merged(sessions: Set<String>, after seq: Int64) -> AsyncStream<DaemonConnector.StreamItem> {
        let connector = connector
        return AsyncStream { continuation in
            let task = Task {
                await withTaskGroup(of: Void.self) { group in
                    for session in sessions {
                        group.addTask {
                            for await item in connector.events(session: session, after: seq) { continuation.yield(item) }
                        }
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// Exit statuses shared by `get` and `wait`.
enum FollowExit {
    /// Every transfer completed: 0. Any failed or cancelled: 1.
    static func code(for transfers: [Transfer]) -> Int32 {
        transfers.allSatisfy { $0.state == .completed } ? 0 : 1
    }
}
