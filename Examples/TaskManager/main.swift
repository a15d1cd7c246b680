// A downloader in the manner of the Chinese URLSession tutorials' TaskManager, on Linux:
//
//   TaskManager add URL...     starts downloads in the background session and exits
//   TaskManager pause ID       pauses a download of an earlier launch (resume data kept)
//   TaskManager resume ID      goes on from it
//   TaskManager wait           stays until every download of the list has ended
//   TaskManager list           the list, as JSON
//   TaskManager                (FERRY_SESSION set: started by the daemon) takes the session's
//                              events, then exits
//
// The list and the Downloads folder live in TASKMANAGER_HOME (default ~/.taskmanager).
import FerryURLSession

let home = URL(fileURLWithPath: ProcessInfo.processInfo.environment["TASKMANAGER_HOME"] ?? NSHomeDirectory() + "/.taskmanager")
let manager = TaskManager(home: home)
let arguments = Array(CommandLine.arguments.dropFirst())

func printList() {
  let list = manager.snapshot.mapValues { ["url": $0.url.absoluteString, "state": $0.state, "file": $0.file ?? ""] }
  let data = try! JSONSerialization.data(withJSONObject: Dictionary(uniqueKeysWithValues: list.map { (String($0.key), $0.value) }), options: [.sortedKeys])
  print(String(decoding: data, as: UTF8.self))
}

func waitUntil(_ done: () -> Bool, seconds: Double) -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while !done() && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
  return done()
}

switch arguments.first {
case "add":
  for text in arguments.dropFirst() {
    guard let url = URL(string: text) else { print("not a URL: \(text)"); exit(2) }
    print("task \(manager.add(url))")
  }
case "pause":
  manager.pause(Int(arguments[1])!)
  print(manager.snapshot[Int(arguments[1])!]?.state ?? "unknown")
case "resume":
  manager.resume(Int(arguments[1])!)
  print("resumed")
case "wait":
  _ = manager.session
  let ended = waitUntil({ !manager.snapshot.values.contains { $0.state == "downloading" } }, seconds: 120)
  printList()
  exit(ended ? 0 : 1)
case "list":
  printList()
case nil where ProcessInfo.processInfo.environment["FERRY_SESSION"] != nil:
  var finished = false
  manager.onFinishEvents = { finished = true }
  _ = manager.session
  _ = waitUntil({ finished }, seconds: 30)
  print("relaunched: events delivered")
  printList()
default:
  print("usage: TaskManager add URL... | pause ID | resume ID | wait | list")
  exit(2)
}
