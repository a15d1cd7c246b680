import FerryCluster
import FerryKit
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryCore

/// PostgreSQL restarted under a member: calls made while it is down wait for it and succeed,
/// the LISTEN comes back, and no event is lost. A server of the test's own, so that the
/// restart disturbs no other test.
@Suite(.enabled(if: PostgresServer.isAvailable, "\(PostgresServer.unavailableReason ?? "")"))
struct PostgresRestartTests {
    @Test func aMemberWaitsForARestartedServerAndCarriesOn() async throws {
        let server = try await PostgresServer.offPool { try PostgresServer.dedicated() }
        defer { try? server.stop() }
        let url = try await PostgresServer.offPool { try server.database() }
        let journal = try await PostgresJournal.connect(to: url)
        defer { journal.close() }
        let seen = Mutex<[Int64]>([])
        journal.onCommit { event in seen.withLock { $0.append(event.seq ?? -1) } }
        let first = try await journal.createTransfer(TransferRecord(session: "s", url: "http://127.0.0.1/1", folder: "Downloads"), reuseExisting: false)
        try await eventually("the first event") { seen.withLock { $0 } == [1] }

        // Stopped, then started again a little later, while the member keeps writing.
        _ = try await PostgresServer.offPool { try server.stop() }
        let restart = Task.detached {
            try await Task.sleep(for: .seconds(2))
            _ = try await PostgresServer.offPool { try server.restartStopped() }
        }
        for n in 2...4 {
            try await journal.update(id: first.record.transferId) { record in
                record.durableBytes = Int64(n)
                return record.event(.progress)
            }
        }
        try await restart.value
        _ = try await journal.createTransfer(TransferRecord(session: "s", url: "http://127.0.0.1/2", folder: "Downloads"), reuseExisting: false)
        #expect(try await journal.transfer(id: first.record.transferId)?.durableBytes == 4)
        #expect(try await journal.transfers().count == 2)
        // Five events, in order; PostgreSQL's sequence may jump ahead across a restart (it logs
        // values in advance), never back.
        try await eventually("every event after the restart", timeout: .seconds(20)) { seen.withLock { $0.count } == 5 }
        let order = seen.withLock { $0 }
        #expect(order.first == 1 && order == order.sorted() && Set(order).count == 5)
        #expect(try await journal.events(session: "s", after: 0).map { $0.seq! } == order)
    }
}
