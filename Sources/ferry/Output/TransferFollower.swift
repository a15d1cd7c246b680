import ArgumentParser
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
                if !firstConnection { try await refresh(&view) }
                firstConnection = false
            case .event(let event):
                view.apply(event)
                // An upload's line names the server's answer, which events do not carry.
                if event.kind == .completed, view.transfer(event.transferId)?.kind == .upload {
                    try await refresh(&view, session: event.session)
                }
            case .disconnected:
                view.note = "reconnecting to the Ferry daemon…"
            }
            view.draw()
            if view.allFinal { break }
        }
        view.note = nil
        // Every field as the daemon has it (completion dates, responses), read in one go.
        try await refresh(&view)
        view.draw(force: true)
        return view.transfers
    }

    /// Re-reads the transfers of one session, or of all of them, with one list call per session;
    /// one that is gone from the daemon counts as cancelled.
    private func refresh(_ view: inout ProgressView, session: String? = nil) async throws {
        let client = try await connector.connect()
        let sessions = session.map { [$0] } ?? Set(view.transfers.map(\.session)).sorted()
        let ids = view.ids
        for session in sessions {
            let current = try await client.transfers(session: session).transfers
            let found = Set(current.map(\.id))
            for transfer in current where ids.contains(transfer.id) { view.replace(transfer) }
            for transfer in view.transfers where transfer.session == session && !found.contains(transfer.id) {
                var removed = transfer
                removed.state = .cancelled
                removed.error = FerryError.notFound(transfer: transfer.id).info
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

extension TransferFollower {
    /// What `get`, `preview` and `podcast download` do with new transfers: print them, or
    /// follow them to the end (Ctrl-C detaches) and exit 0 only if all completed.
    /// - Parameter seq: the journal position the transfers are current at; nil to read them again.
    /// Transfers as `--no-wait` says them, in one text: a line each (id, state, URL), or each
    /// as an element of a JSON array already holding `listed`.
    static func lines(_ transfers: [Transfer], json: Bool, after listed: Int) throws -> String {
        var text = ""
        guard json else {
            for transfer in transfers { text += "\(transfer.id) \(transfer.state.rawValue) \(transfer.url)\n" }
            return text
        }
        let encoder = FerryJSON.encoder(pretty: true)
        for (index, transfer) in transfers.enumerated() {
            text += (listed + index > 0 ? ",\n" : "\n") + String(decoding: try encoder.encode(transfer), as: UTF8.self)
        }
        return text
    }

    /// New transfers answered as ids (``CreatedTransferIDs``), said as ``lines(_:json:after:)``
    /// says them: id, state, and the URL as given.
    static func lines(_ created: CreatedTransferIDs, urls: [String]) -> String {
        var text = ""
        for (index, id) in created.ids.enumerated() {
            text += "\(id) \(created.states[index].rawValue) \(index < urls.count ? urls[index] : "")\n"
        }
        return text
    }

    static func report(_ transfers: [Transfer], after seq: Int64? = nil, wait: Bool, json: Bool) async throws {
        guard wait else {
            if json { return try FerryJSON.encoder(pretty: true).printing(transfers) }
            return Terminal.print(try lines(transfers, json: false, after: 0), terminator: "")
        }
        let interrupt = Terminal.onInterrupt {
            Terminal.progress("\nDetached; the downloads continue in the daemon (`ferry ls`, `ferry wait ID`).\n")
            Foundation.exit(130)
        }
        defer { interrupt.cancel() }
        let connector = CLIConnection.connector
        var current = transfers
        var position = seq ?? 0
        if seq == nil {
            // They may have moved on since they were returned: start from their current state.
            let list = try await connector.connect().transfers()
            current = transfers.map { t in list.transfers.first { $0.id == t.id } ?? t }
            position = list.lastEventSeq
        }
        let final = try await TransferFollower(connector: connector).follow(current, after: position)
        if json {
            try FerryJSON.encoder(pretty: true).printing(final)
        } else {
            for transfer in final { Terminal.print(ProgressView.summary(transfer)) }
        }
        let code = FollowExit.code(for: final)
        if code != 0 { throw ExitCode(code) }
    }
}

/// Exit statuses shared by `get` and `wait`.
enum FollowExit {
    /// Every transfer completed: 0. Any failed or cancelled: 1.
    static func code(for transfers: [Transfer]) -> Int32 {
        transfers.allSatisfy { $0.state == .completed } ? 0 : 1
    }
}
