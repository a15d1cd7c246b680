import FerryTestSupport
import Foundation
import Testing

/// A reader that quits early (`ferry ls | head -1`) ends a listing command quietly with status
/// 0, as `ls | head` does: no trap, no backtrace. Each listing prints far more than a pipe
/// holds (64 KiB), so its writes block until `head` has gone and then meet a closed pipe.
@Suite(.serialized) struct ClosedPipeCLITests {
    @Test func listingsEndQuietlyWhenTheReaderCloses() async throws {
        let count = 1_500
        try await Origin.run { origin, base in
            let feed = TestFeed(
                title: "Long Show",
                items: (1...count).map {
                    TestFeed.Item(guid: "g\($0)", title: "Episode \($0) with a title long enough to fill the line", published: "Fri, 01 Mar 2024 06:00:00 GMT",
                                  enclosure: base.appendingPathComponent("media/\($0).mp3").absoluteString)
                }
            )
            origin.serve("/long.xml", .init(data: feed.data))
            try await CommandRunner.withHome { home in
                // Queued for tomorrow: listed, never fetched.
                let urls = (1...count).map { base.appendingPathComponent("files/\($0)-with-a-name-long-enough-to-fill-the-line.bin").absoluteString }
                let get = try await CommandRunner.ferry(["get", "--no-wait", "--at", "+1d", "-i", "-"], home: home, input: urls.joined(separator: "\n"))
                #expect(get.status == 0, "\(get)")
                let add = try await CommandRunner.ferry(["podcast", "add", base.appendingPathComponent("long.xml").absoluteString], home: home)
                #expect(add.status == 0, "\(add)")

                let listings = [
                    ["ls"], ["ls", "--all"], ["ls", "--json"], ["podcast", "episodes", "1"], ["podcast", "episodes", "1", "--json"],
                    ["podcast", "ls"], ["podcast", "export"], ["session", "show"], ["status"], ["--help"], ["get", "--help"],
                ]
                for arguments in listings {
                    let full = try await CommandRunner.ferry(arguments, home: home)
                    #expect(full.status == 0, "\(arguments): \(full)")
                    let big = full.stdout.utf8.count > 64 << 10
                    // Many runs: whether a write meets the closed pipe, and which, is a race.
                    let runs = big ? 15 : 3
                    let result = try await Self.throughHead(arguments, runs: runs, home: home)
                    #expect(result.statuses == Array(repeating: 0, count: runs), "ferry \(arguments.joined(separator: " ")) | head -1: \(result)")
                    #expect(result.stderr.isEmpty, "ferry \(arguments.joined(separator: " ")) | head -1 printed: \(result.stderr.prefix(2_000))")
                    #expect(result.firstLines.allSatisfy { $0 == full.stdout.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) },
                            "head saw another first line: \(result.firstLines.prefix(3))")
                }
                // The daemon's own listing sizes, so the test knows its pipes overflowed.
                let ls = try await CommandRunner.ferry(["ls", "--all"], home: home)
                #expect(ls.stdout.utf8.count > 64 << 10, "ls --all printed only \(ls.stdout.utf8.count) bytes")
            }
        }
    }

    /// Runs `ferry arguments | head -n 1` `runs` times through bash, giving ferry's exit statuses,
    /// what it wrote on stderr, and the lines head printed.
    private static func throughHead(_ arguments: [String], runs: Int, home: URL) async throws -> (statuses: [Int32], stderr: String, firstLines: [String]) {
        let quoted = ([CommandRunner.ferryBinary] + arguments).map { "'\($0.replacingOccurrences(of: "'", with: "'\\''"))'" }.joined(separator: " ")
        let errors = home.appendingPathComponent("pipe-stderr")
        let script = """
            : > '\(errors.path)'
            for i in $(seq \(runs)); do
              \(quoted) 2>>'\(errors.path)' | head -n 1
              echo "status=${PIPESTATUS[0]}"
            done
            """
        var environment = ProcessInfo.processInfo.environment
        environment["FERRY_HOME"] = home.path
        environment["TERM"] = "dumb"
        let output = try await CommandRunner.run("/bin/bash", ["-c", script], environment: environment, timeout: .seconds(300))
        let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let statuses = lines.compactMap { $0.hasPrefix("status=") ? Int32($0.dropFirst(7)) : nil }
        var firstLines: [String] = []
        for (index, line) in lines.enumerated() where line.hasPrefix("status=") && index > 0 {
            firstLines.append(lines[index - 1])
        }
        let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        return (statuses, stderr, firstLines)
    }
}
