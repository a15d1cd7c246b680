import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// A FerryKit program launched by the daemon, as iOS relaunches an app for its background
/// session: `Examples/PodcastFetcher` (written as any program using FerryKit would be) starts
/// downloads and exits; when they finish the daemon starts it again, with FERRY_SESSION set, and
/// it reads what it missed, reports it and acknowledges it.
@Suite struct LaunchOnEventsTests {
    static var fetcher: String {
        URL(fileURLWithPath: CommandRunner.ferryBinary).deletingLastPathComponent().appendingPathComponent("PodcastFetcher").path
    }

    @Test func theDaemonStartsTheProgramWhenItsDownloadsFinish() async throws {
        let gate = Origin.Gate()
        let episodes = (1...2).map { Origin.bytes(60_000, seed: UInt64($0)) }
        try await Origin.run { origin, base in
            for n in 1...2 {
                origin.serve("/ep\(n).mp3", .init(data: episodes[n - 1]))
                origin.script("/ep\(n).mp3", [.holdAfter(10_000, gate)])
            }
            try await CommandRunner.withHome { home in
                let report = home.appendingPathComponent("report.log")
                var environment = ProcessInfo.processInfo.environment
                environment["FERRY_HOME"] = home.path
                environment["FERRY_PORT"] = "0"
                environment["FERRY_BIN"] = CommandRunner.ferryBinary
                environment["PODCAST_FETCHER_REPORT"] = report.path
                environment["FERRY_SESSION"] = nil
                let urls = (1...2).map { base.appendingPathComponent("ep\($0).mp3").absoluteString }
                let started = try await CommandRunner.run(Self.fetcher, urls, environment: environment, timeout: .seconds(60))
                #expect(started.status == 0, "\(started)")
                #expect(started.stdout.contains("downloading"))
                #expect(!FileManager.default.fileExists(atPath: report.path), "not launched while downloads run")
                // The program has exited; the downloads finish without it.
                gate.open()
                try await eventually(
                    "the launched program's report; it has: \((try? String(contentsOf: report, encoding: .utf8)) ?? "nothing"); the daemon's log ends: "
                        + String(((try? String(contentsOf: home.appendingPathComponent("state/daemon.log"), encoding: .utf8)) ?? "").suffix(1500)),
                    timeout: .seconds(30)
                ) {
                    let text = (try? String(contentsOf: report, encoding: .utf8)) ?? ""
                    return text.components(separatedBy: "finished ").count - 1 == 2
                }
                let text = try String(contentsOf: report, encoding: .utf8)
                let launches = text.components(separatedBy: "started by the daemon for session podcast-fetcher").count - 1
                #expect((1...2).contains(launches), "\(text)")
                for n in 1...2 { #expect(text.contains("ep\(n).mp3")) }
                // It acknowledged them: a run now has nothing new.
                let again = try await CommandRunner.run(Self.fetcher, [], environment: environment, timeout: .seconds(60))
                #expect(again.stdout.contains("Nothing finished since the last run."), "\(again)")
            }
        }
    }
}
