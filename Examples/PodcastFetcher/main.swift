// podcast-fetcher: a tiny FerryKit example. It starts episode downloads in a background session
// and exits at once; the Ferry daemon goes on downloading. Run it again and it tells you what
// finished (or failed) while it was gone.
//
//     podcast-fetcher URL...   start downloading the episodes, then exit
//     podcast-fetcher          report what finished since the last run, and what is still going
//
// It also asks the daemon to start it again when downloads finish while it is not running (as
// iOS relaunches an app for its background session). Started that way (FERRY_SESSION is set),
// it writes its report to ~/.local/state/podcast-fetcher/report.log (or PODCAST_FETCHER_REPORT).
//
// It finds the daemon like `ferry` does (FERRY_HOME, else XDG folders) and starts it when it is
// not running, if `ferry` is on the PATH (or FERRY_BIN names it).

import FerryKit
import Foundation

/// Where the report goes when the daemon started this program: nobody reads its output there.
let reportFile: URL? = ProcessInfo.processInfo.environment["FERRY_SESSION"] == nil ? nil : {
    let environment = ProcessInfo.processInfo.environment
    if let path = environment["PODCAST_FETCHER_REPORT"] { return URL(fileURLWithPath: path) }
    return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/state/podcast-fetcher/report.log")
}()

/// A line of the report: printed, and appended to the report file when launched by the daemon.
func say(_ line: String) {
    print(line)
    guard let reportFile else { return }
    try? FileManager.default.createDirectory(at: reportFile.deletingLastPathComponent(), withIntermediateDirectories: true)
    if let handle = try? FileHandle(forWritingTo: reportFile) {
        handle.seekToEndOfFile()
        handle.write(Data((line + "\n").utf8))
        try? handle.close()
    } else {
        try? Data((line + "\n").utf8).write(to: reportFile)
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("podcast-fetcher: \(message)\n".utf8))
    exit(1)
}

/// Starts one download per URL.
func start(_ arguments: [String], in session: BackgroundSession) async throws {
    let urls = arguments.map { argument in
        guard let url = URL(string: argument), ["http", "https"].contains(url.scheme) else {
            fail("'\(argument)' is not an http or https URL.")
        }
        return url
    }
    for url in urls {
        let task = try await session.downloadTask(with: url, taskDescription: url.lastPathComponent)
        print("#\(task.taskIdentifier) downloading \(url.absoluteString)")
    }
    print("The downloads go on without me; run podcast-fetcher again to see what finished.")
}

/// Reports what happened since the last run, then acknowledges it so the next run does not
/// report it again.
func report(_ session: BackgroundSession) async throws {
    let missed = try await session.missedEvents()
    let tasks = try await session.allTasks()
    let names = Dictionary(uniqueKeysWithValues: tasks.map { ($0.taskIdentifier, $0.url.absoluteString) })
    var news = 0
    for event in missed {
        let name = names[event.taskIdentifier] ?? "#\(event.taskIdentifier)"
        switch event.kind {
        case .didFinish(let location, let sha256):
            say("finished \(name)\n    \(location.path)\n    SHA-256 \(sha256)")
        case .didFail(let error):
            say("failed \(name): \(error.message)")
        case .didCancel:
            say("cancelled \(name)")
        default:
            continue
        }
        news += 1
    }
    if news == 0 { say("Nothing finished since the last run.") }
    // Handled: the daemon may forget them, and the next run starts after them.
    if let last = missed.compactMap(\.seq).max() {
        try await session.acknowledge(through: last)
    }
    for task in tasks where !task.state.isFinal {
        let percent = task.fractionCompleted.map { " \(Int($0 * 100))%" } ?? ""
        say("still \(task.state.rawValue)\(percent) \(task.url.absoluteString)")
    }
}

do {
    if let session = ProcessInfo.processInfo.environment["FERRY_SESSION"] { say("started by the daemon for session \(session)") }
    var configuration = BackgroundSession.Configuration()
    configuration.launchOnEvents = .thisProgram()
    let session = try await BackgroundSession(identifier: "podcast-fetcher", configuration: configuration)
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.isEmpty {
        try await report(session)
    } else {
        try await start(arguments, in: session)
    }
} catch let error as FerryError {
    fail(error.message)
} catch {
    fail("\(error)")
}
