// Half Tunes without its screens: the tutorial's search, downloads, pause and resume driven from
// the command line, each delegate message it reacts to printed as a line.
//
//   HalfTunes search TERM            the search (a data task), one line per track
//   HalfTunes download TERM [N]      the search, then track N's preview (default 0): progress
//                                    lines, then the file's path
//   HalfTunes pause-resume TERM [N]  the same, paused at the first progress and resumed from
//                                    its resume data
import FerryURLSession

let arguments = CommandLine.arguments.dropFirst()
guard let command = arguments.first, let term = arguments.dropFirst().first else {
  print("usage: HalfTunes search|download|pause-resume TERM [TRACK]")
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
