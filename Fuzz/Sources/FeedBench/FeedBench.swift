import FerryFeeds
import Foundation

/// Times Ferry's feed parser for bench/run (scenario 7), the same way
/// bench/feeds/podcastparser_bench.py times podcastparser: every file is read into memory first,
/// then the whole set is parsed `--iterations` times. Prints one JSON object: the seconds of
/// each iteration, the feeds parsed and refused, the episodes found and the process's peak RSS.
///
///     FeedBench [--iterations N] FILE...
@main
struct FeedBench {
    static func main() throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var iterations = 5
        if let flag = arguments.firstIndex(of: "--iterations"), flag + 1 < arguments.count {
            iterations = Int(arguments[flag + 1]) ?? iterations
            arguments.removeSubrange(flag...flag + 1)
        }
        let documents = try arguments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let feedURL = URL(string: "https://example.com/feed.xml")
        var seconds: [Double] = []
        var parsed = 0, refused = 0, episodes = 0
        for _ in 0..<iterations {
            parsed = 0
            refused = 0
            episodes = 0
            let start = ContinuousClock.now
            for document in documents {
                do {
                    let feed = try FeedParser.parse(document, url: feedURL)
                    parsed += 1
                    episodes += feed.episodes.count
                } catch {
                    refused += 1
                }
            }
            seconds.append((ContinuousClock.now - start) / .seconds(1))
        }
        let report: [String: Any] = [
            "parser": "ferry", "seconds": seconds, "feeds": parsed, "refused": refused,
            "episodes": episodes, "peak_rss_kib": peakRSS(),
        ]
        let json = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        print(String(decoding: json, as: UTF8.self))
    }

    /// VmHWM, in KiB. Not getrusage's ru_maxrss: that keeps the peak of the process before its
    /// exec (here the Python harness, ~50 MiB), hiding anything smaller.
    static func peakRSS() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? -1
    }
}
