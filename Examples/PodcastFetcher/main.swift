// podcast-fetcher: a tiny FerryKit example. It starts episode downloads in a background session
// and exits at once; the Ferry daemon goes on downloading. Run it again and it tells you what
// finished (or failed) while it was gone.
//
//     podcast-fetcher URL...   start downloading the episodes, then exit
//     podcast-fetcher          report what finished since the last run, and what is still going
//
// It finds the daemon like `ferry` does (FERRY_HOME, else XDG folders) and starts it when it is
// not running, if `ferry` is on the PATH (or FERRY_BIN names it).

import FerryKit
import Foundation

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
            print("finished \(name)\n    \(location.path)\n    SHA-256 \(sha256)")
        case .didFail(let error):
            print("failed \(name): \(error.message)")
        case .didCancel:
            print("cancelled \(name)")
        default:
            continue
        }
        news += 1
    }
    if news == 0 { print("Nothing finished since the last run.") }
    // Handled: the daemon may forget them, and the next run starts after them.
    if let last = missed.compactMap(\.seq).max() {
        try await session.acknowledge(through: last)
    }
    for task in tasks where !task.state.isFinal {
        let percent = task.fractionCompleted.map { " \(Int($0 * 100))%" } ?? ""
        print("still \(task.state.rawValue)\(percent) \(task.url.absoluteString)")
    }
}

do {
    let session = try await BackgroundSession(identifier: "podcast-fetcher")
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
