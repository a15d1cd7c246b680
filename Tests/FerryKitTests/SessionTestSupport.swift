import FerryKit
import FerryTestSupport
import Foundation
import Synchronization

extension DaemonHarness {
    /// A session on this in-process daemon (found through `daemon.json` in the harness's state
    /// folder, like any program finds the daemon), never starting one itself.
    func session(_ identifier: String) async throws -> BackgroundSession {
        try await BackgroundSession(identifier: identifier, configuration: .init(paths: paths, launcher: nil))
    }
}

/// Events seen so far by an iteration running elsewhere, for assertions and failure messages.
final class EventLog: Sendable {
    private let storage = Mutex<[DownloadEvent]>([])
    var events: [DownloadEvent] { storage.withLock { $0 } }
    func append(_ event: DownloadEvent) { storage.withLock { $0.append(event) } }
}

/// Iterates `session.events` until `stop` holds, failing after `timeout` with what came so far;
/// `log` shows the events as they come.
func collect(
    _ session: BackgroundSession, timeout: Duration = .seconds(30), log: EventLog = EventLog(),
    until stop: @escaping @Sendable ([DownloadEvent]) -> Bool
) async throws -> [DownloadEvent] {
    return try await withThrowingTaskGroup(of: [DownloadEvent]?.self) { group in
        group.addTask {
            var events: [DownloadEvent] = []
            for try await event in session.events {
                events.append(event)
                log.append(event)
                if stop(events) { return events }
            }
            throw TestFailure("the event sequence ended after \(events.summary)")
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let events = try await group.next()! else {
            throw TestFailure("events did not arrive in \(timeout); got \(log.events.summary)")
        }
        return events
    }
}

/// The task's value, failing (and cancelling it) if it takes longer than `timeout`.
func value<T: Sendable>(of task: Task<T, any Error>, within timeout: Duration) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await task.value }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let value = try await group.next()! else {
            task.cancel()
            throw TestFailure("the task did not end in \(timeout)")
        }
        return value
    }
}

extension DownloadEvent {
    /// The location and digest of a `didFinish`.
    var finish: (location: URL, sha256: String)? {
        if case .didFinish(let location, let sha256) = kind { (location, sha256) } else { nil }
    }

    /// The bytes and total of a `didWriteData`.
    var written: (bytes: Int64, total: Int64?)? {
        if case .didWriteData(let bytes, let total) = kind { (bytes, total) } else { nil }
    }

    /// The offset of a `didResume`.
    var resumeOffset: Int64? {
        if case .didResume(let offset) = kind { offset } else { nil }
    }
}

extension [DownloadEvent] {
    /// `didFinish` events by task.
    var finished: [Int64: (location: URL, sha256: String)] {
        Dictionary(compactMap { event in event.finish.map { (event.taskIdentifier, $0) } }, uniquingKeysWith: { first, _ in first })
    }

    func count(of kind: DownloadEvent.Kind) -> Int { filter { $0.kind == kind }.count }

    var seqs: [Int64] { compactMap(\.seq) }

    /// `12:didCreate#3 12:didStart#4 …`, for failure messages.
    var summary: String {
        map { event in
            let name = "\(event.kind)".prefix(while: { $0 != "(" })
            return "\(event.taskIdentifier):\(name)\(event.seq.map { "#\($0)" } ?? "")"
        }.joined(separator: " ")
    }
}

/// The pairs of a list that break strict increase (empty when it strictly increases).
func nonIncreasing(_ values: [Int64]) -> [(Int64, Int64)] {
    zip(values, values.dropFirst()).filter { $0.0 >= $0.1 }
}
