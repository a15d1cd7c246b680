// The starter project's pieces that the tutorial's code uses and neither seed text shows
// (Tests/Fixtures/halftunes/README.md lists them), written for this program: the tutorial's
// own files beside this one are the fixture's, with only their imports changed and their UIKit
// lines left out (Tests/FerryURLSessionTests/HalfTunesSourceTests.swift checks that).
import FerryURLSession

/// A stand-in for UIKit's view controller: the session's delegate must be an NSObject.
class UIViewController: NSObject {
  func viewDidLoad() {}
}

/// A song of the search's results.
final class Track {
  let name: String
  let artist: String
  let previewURL: URL
  let index: Int
  var downloaded = false

  init(name: String, artist: String, previewURL: URL, index: Int) {
    self.name = name
    self.artist = artist
    self.previewURL = previewURL
    self.index = index
  }
}

extension QueryService {
  /// The iTunes Search API's answer into tracks.
  func updateSearchResults(_ data: Data) {
    tracks.removeAll()
    guard let response = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let results = response["results"] as? [[String: Any]]
    else {
      errorMessage += "The search's answer is not the iTunes Search API's.\n"
      return
    }
    for result in results {
      guard let preview = (result["previewUrl"] as? String).flatMap(URL.init(string:)) else { continue }
      tracks.append(Track(
        name: result["trackName"] as? String ?? "", artist: result["artistName"] as? String ?? "",
        previewURL: preview, index: tracks.count
      ))
    }
  }
}

extension SearchViewController {
  /// The app's Documents folder (here `HALFTUNES_DOCUMENTS`, else ~/Documents) and the URL's last component.
  func localFilePath(for url: URL) -> URL {
    let documents = ProcessInfo.processInfo.environment["HALFTUNES_DOCUMENTS"].map { URL(fileURLWithPath: $0) }
      ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent("Documents")
    return documents.appendingPathComponent(url.lastPathComponent)
  }
}
