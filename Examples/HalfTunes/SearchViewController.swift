import FerryURLSession

class SearchViewController: UIViewController { // scaffold
  let downloadService = DownloadService() // scaffold
  // localFilePath(for:) and tableView are starter-project members that the
  // seed texts do not show.

  lazy var downloadsSession: URLSession = {
    let configuration =
      URLSessionConfiguration.background(withIdentifier:
        "com.xxxx.HalfTunes.bgSession")
    return URLSession(configuration: configuration,
                      delegate: self,
                      delegateQueue: nil)
  }()

  override func viewDidLoad() { // scaffold
    // (the rest of viewDidLoad() is starter-project code, not shown)
    downloadService.downloadsSession = downloadsSession
  } // scaffold

} // scaffold
