import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// A daemon that stops sending halfway through its replay, without closing the connection (a
/// stopped process): `missedEvents()` fails with `daemon_unreachable` instead of waiting forever.
/// The daemon is a loopback origin serving what one would answer, the replay cut short.
@Suite struct ReplayStallTests {
    @Test(.timeLimit(.minutes(1))) func aDaemonThatStopsSendingMidReplayIsAnErrorNotAWait() async throws {
        let encoder = FerryJSON.encoder()
        let created = TransferEvent(seq: 1, kind: .created, transferId: 1, session: "app")
        let replay = "retry: 1000\n\nid: 1\nevent: created\ndata: \(String(decoding: try encoder.encode(created), as: UTF8.self))\n\n"
        try await Origin.run { origin, base in
            let status = DaemonStatus(
                version: FerryVersion.current, pid: getpid(), url: base.absoluteString, startedAt: Date(), libraryPath: "/",
                statePath: "/", maxConcurrent: 1, counts: [:], lastEventSeq: 2
            )
            origin.serve("/v1/status", .init(data: try encoder.encode(status), contentType: "application/json"))
            let info = SessionInfo(name: "app", acknowledgedSeq: 0, lastEventSeq: 2)
            origin.serve("/v1/sessions/app", .init(data: try encoder.encode(info), contentType: "application/json"))
            // Event 1 and the first of many comment lines, then nothing for a minute (the origin
            // stalls after the 16 KiB piece that holds the event): no `replayed` mark comes.
            let stream = Data((replay + String(repeating: ": more to come\n", count: 4000)).utf8)
            origin.serve("/v1/sessions/app/events", .init(data: stream, contentType: "text/event-stream"))
            origin.script("/v1/sessions/app/events", [.stallAfter(replay.utf8.count, .seconds(60))])

            try await withTemporaryDirectory { home in
                let paths = FerryPaths(library: home.appendingPathComponent("library"), state: home.appendingPathComponent("state"))
                try FileManager.default.createDirectory(at: paths.state, withIntermediateDirectories: true)
                let daemon = DaemonInfo(url: base.absoluteString, pid: getpid(), version: FerryVersion.current, startedAt: Date())
                try encoder.encode(daemon).write(to: paths.daemonInfo)
                try "token".write(to: paths.token, atomically: true, encoding: .utf8)

                var configuration = BackgroundSession.Configuration(paths: paths, launcher: nil)
                configuration.replayStallLimit = .seconds(1)
                let session = try await BackgroundSession(identifier: "app", configuration: configuration)
                let started = ContinuousClock.now
                let error = await #expect(throws: FerryError.self) { try await session.missedEvents() }
                #expect(error?.code == .daemonUnreachable, "\(String(describing: error))")
                #expect(ContinuousClock.now - started < .seconds(30), "it gave up after the stall limit, not the origin's stall")
                #expect(origin.requests(for: "/v1/sessions/app/events").count == 1)
            }
        }
    }
}
