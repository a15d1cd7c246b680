import FerryURLSession

/// A download list as Chinese URLSession tutorials write their `TaskManager`: one background
/// session, the manager as its delegate, and the list of downloads keyed by `taskIdentifier`,
/// saved so a later launch of the program knows which task is which.
final class TaskManager: NSObject, URLSessionDownloadDelegate {
  static let identifier = "com.example.TaskManager.background"

  /// One download of the list.
  struct Item: Codable {
    var url: URL
    var state: String  // downloading, paused, done, failed, cancelled
    var progress: Double = 0
    var resumeData: Data?
    var file: String?
  }

  let home: URL
  private(set) var items: [Int: Item] = [:]
  private let lock = NSLock()
  /// Called on the delegate queue once the session's background events are delivered.
  var onFinishEvents: (() -> Void)?
  /// Called when a task ends.
  var onTaskEnd: ((Int) -> Void)?

  lazy var session: URLSession = {
    let configuration = URLSessionConfiguration.background(withIdentifier: TaskManager.identifier)
    configuration.sessionSendsLaunchEvents = true
    return URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
  }()

  init(home: URL) {
    self.home = home
    super.init()
    try? FileManager.default.createDirectory(at: home.appendingPathComponent("Downloads"), withIntermediateDirectories: true)
    if let data = try? Data(contentsOf: listFile), let saved = try? JSONDecoder().decode([Int: Item].self, from: data) {
      items = saved
    }
  }

  private var listFile: URL { home.appendingPathComponent("tasks.json") }

  private func save() {
    let data = try! JSONEncoder().encode(items)
    try! data.write(to: listFile, options: .atomic)
  }

  private func update(_ id: Int, _ change: (inout Item) -> Void) {
    lock.lock()
    defer { lock.unlock() }
    guard var item = items[id] else { return }
    change(&item)
    items[id] = item
    save()
  }

  var snapshot: [Int: Item] {
    lock.lock()
    defer { lock.unlock() }
    return items
  }

  // MARK: Commands

  @discardableResult
  func add(_ url: URL) -> Int {
    let task = session.downloadTask(with: url)
    lock.lock()
    items[task.taskIdentifier] = Item(url: url, state: "downloading")
    save()
    lock.unlock()
    task.resume()
    return task.taskIdentifier
  }

  func pause(_ id: Int) {
    let done = DispatchSemaphore(value: 0)
    session.getAllTasks { tasks in
      guard let task = tasks.first(where: { $0.taskIdentifier == id }) as? URLSessionDownloadTask else {
        done.signal()
        return
      }
      task.cancel(byProducingResumeData: { data in
        self.update(id) {
          $0.state = "paused"
          $0.resumeData = data
        }
        done.signal()
      })
    }
    done.wait()
  }

  func resume(_ id: Int) {
    guard let item = snapshot[id] else { return }
    let task = item.resumeData.map { session.downloadTask(withResumeData: $0) } ?? session.downloadTask(with: item.url)
    lock.lock()
    items[id] = nil
    items[task.taskIdentifier] = Item(url: item.url, state: "downloading")
    save()
    lock.unlock()
    task.resume()
  }

  // MARK: URLSessionDownloadDelegate

  func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
    guard let item = snapshot[downloadTask.taskIdentifier] else { return }
    let destination = home.appendingPathComponent("Downloads").appendingPathComponent(item.url.lastPathComponent)
    try? FileManager.default.removeItem(at: destination)
    do {
      try FileManager.default.moveItem(at: location, to: destination)
      update(downloadTask.taskIdentifier) {
        $0.state = "done"
        $0.progress = 1
        $0.file = destination.path
      }
    } catch {
      update(downloadTask.taskIdentifier) { $0.state = "failed" }
    }
  }

  func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
    guard totalBytesExpectedToWrite > 0 else { return }
    update(downloadTask.taskIdentifier) { $0.progress = Double(totalBytesWritten) / Double(totalBytesExpectedToWrite) }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
    if let error = error as? URLError {
      update(task.taskIdentifier) { item in
        guard item.state != "paused" else { return }
        item.state = error.code == .cancelled ? "cancelled" : "failed"
        item.resumeData = error.downloadTaskResumeData
      }
    }
    onTaskEnd?(task.taskIdentifier)
  }

  func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
    onFinishEvents?()
  }
}
