// Half Tunes without its screens: the tutorial's search, downloads, pause and resume driven from
// the command line, each delegate message it reacts to printed as a line.
//
//   HalfTunes search TERM            the search (a data task), one line per track
//   HalfTunes download TERM [N]      the search, then track N's preview (default 0): progress
//                                    lines, then the file's path
//   HalfTunes pause-resume TERM [N]  the same, paused at the first progress and resumed from
//                                    its resume data
//   HalfTunes cancel TERM [N]        the same, cancelled at the first progress (the tutorial's
//                                    cancelDownload): nothing is placed
//   HalfTunes pause-save TERM N FILE the same, paused at the first progress; its resume data
//                                    written to FILE, and the program ends
//   HalfTunes resume-from TERM N FILE a later run: the tutorial's resumeDownload with FILE's
//                                    resume data, to the file's path
//   HalfTunes start TERM [N]         starts track N's download in the background session and
//                                    exits at once: the Ferry daemon goes on with it
//   HalfTunes events TERM [N] [S]    makes the background session again and waits up to S
//                                    seconds (default 60) for the delegate to place track N's
//                                    file, as an app relaunched for its session's events
//   HalfTunes                        (with FERRY_SESSION set: the daemon started it because the
//                                    session's tasks ended) makes the session, lets the delegate
//                                    place what ended, and exits
import FerryURLSession

let arguments = CommandLine.arguments.dropFirst()
if arguments.isEmpty, let session = ProcessInfo.processInfo.environment["FERRY_SESSION"] {
  let controller = SearchViewController()
  let documents = controller.localFilePath(for: URL(fileURLWithPath: "/x")).deletingLastPathComponent()
  let before = Set((try? FileManager.default.contentsOfDirectory(atPath: documents.path)) ?? [])
  controller.viewDidLoad()
  let deadline = Date().addingTimeInterval(30)
  while Date() < deadline {
    let now = Set((try? FileManager.default.contentsOfDirectory(atPath: documents.path)) ?? [])
    if !now.subtracting(before).isEmpty {
      Thread.sleep(forTimeInterval: 1)  // the delegate queue's last calls
      print("relaunched for \(session): placed \(now.subtracting(before).sorted().joined(separator: ", "))")
      exit(0)
    }
    Thread.sleep(forTimeInterval: 0.1)
  }
  print("relaunched for \(session): nothing placed")
  exit(0)
}
guard let command = arguments.first, let term = arguments.dropFirst().first else {
  print("usage: HalfTunes search|download|pause-resume|pause-save|resume-from|cancel|start|events TERM [TRACK] [FILE]")
  exit(2)
}
let trackNumber = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 0

let queryService = QueryService()
let controller = SearchViewController()
controller.viewDidLoad()

func search() -> [Track] {
  let done = DispatchSemaphore(value: 0)
  var found: [Track] = []
  queryService.getSearchResults(searchTerm: term) { tracks, errorMessage in
    found = tracks ?? []
    if !errorMessage.isEmpty { print("error: \(errorMessage)") }
    done.signal()
  }
  if done.wait(timeout: .now() + 60) == .timedOut { print("error: the search did not answer"); exit(1) }
  return found
}

let tracks = search()
if command == "search" {
  for track in tracks { print("track \(track.index): \(track.artist) - \(track.name) \(track.previewURL)") }
  exit(tracks.isEmpty ? 1 : 0)
}
guard tracks.indices.contains(trackNumber) else { print("error: no track \(trackNumber)"); exit(1) }
let track = tracks[trackNumber]
let destination = controller.localFilePath(for: track.previewURL)
switch command {
case "start":
  controller.downloadService.startDownload(track)
  print("started task \(controller.downloadService.activeDownloads[track.previewURL]?.task?.taskIdentifier ?? -1)")
  exit(0)
case "pause-save":
  guard let saveTo = arguments.dropFirst(3).first else { print("usage: HalfTunes pause-save TERM N FILE"); exit(2) }
  controller.downloadService.startDownload(track)
  while (controller.downloadService.activeDownloads[track.previewURL]?.progress ?? 0) == 0, !track.downloaded {
    Thread.sleep(forTimeInterval: 0.01)
  }
  guard let download = controller.downloadService.activeDownloads[track.previewURL] else { print("error: it ended first"); exit(1) }
  controller.downloadService.pauseDownload(track)
  let deadline = Date().addingTimeInterval(30)
  while download.resumeData == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
  guard let data = download.resumeData else { print("error: no resume data"); exit(1) }
  try data.write(to: URL(fileURLWithPath: saveTo))
  print("paused at \(download.progress), resume data \(data.count) bytes in \(saveTo)")
  exit(0)
case "resume-from":
  guard let savedAt = arguments.dropFirst(3).first, let data = FileManager.default.contents(atPath: savedAt) else {
    print("usage: HalfTunes resume-from TERM N FILE (a file pause-save wrote)")
    exit(2)
  }
  let download = Download(track: track)
  download.resumeData = data
  controller.downloadService.activeDownloads[track.previewURL] = download
  controller.downloadService.resumeDownload(track)
  let deadline = Date().addingTimeInterval(60)
  while !track.downloaded, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
  Thread.sleep(forTimeInterval: 0.5)  // the delegate queue's last calls
  guard FileManager.default.fileExists(atPath: destination.path) else { print("error: nothing placed"); exit(1) }
  print("downloaded \(destination.path)")
  exit(0)
case "cancel":
  controller.downloadService.startDownload(track)
  while (controller.downloadService.activeDownloads[track.previewURL]?.progress ?? 0) == 0, !track.downloaded {
    Thread.sleep(forTimeInterval: 0.01)
  }
  let task = controller.downloadService.activeDownloads[track.previewURL]?.task
  controller.downloadService.cancelDownload(track)
  Thread.sleep(forTimeInterval: 2)  // a late delegate call would place the file meanwhile
  let placed = FileManager.default.fileExists(atPath: destination.path)
  print(placed ? "placed anyway" : "cancelled task \(task?.taskIdentifier ?? -1) (\(task?.state == .completed ? "completed" : "not completed")), nothing placed")
  exit(placed ? 1 : 0)
case "events":
  // viewDidLoad() made the session; the delegate hears what ended while this program was gone.
  let seconds = arguments.dropFirst(3).first.flatMap { Double($0) } ?? 60
  let deadline = Date().addingTimeInterval(seconds)
  while !FileManager.default.fileExists(atPath: destination.path) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
  guard FileManager.default.fileExists(atPath: destination.path) else { print("nothing delivered"); exit(3) }
  print("delivered \(destination.path)")
  exit(0)
default:
  break
}
controller.downloadService.startDownload(track)
var paused = false
while !track.downloaded {
  Thread.sleep(forTimeInterval: 0.05)
  let download = controller.downloadService.activeDownloads[track.previewURL]
  if command == "pause-resume", !paused, let download, download.progress > 0 {
    controller.downloadService.pauseDownload(track)
    paused = true
    while download.resumeData == nil { Thread.sleep(forTimeInterval: 0.05) }
    print("paused at \(download.progress), resume data \(download.resumeData?.count ?? 0) bytes")
    controller.downloadService.resumeDownload(track)
  }
  if let download { print("progress \(download.progress)") }
}
print("downloaded \(controller.localFilePath(for: track.previewURL).path)")
