import FerryURLSession

class DownloadService { // scaffold
  var activeDownloads: [URL: Download] = [:]
  var downloadsSession: URLSession! // scaffold

  func startDownload(_ track: Track) { // scaffold
    // 1
    let download = Download(track: track)
    // 2
    download.task = downloadsSession.downloadTask(with: track.previewURL)
    // 3
    download.task?.resume()
    // 4
    download.isDownloading = true
    // 5
    activeDownloads[download.track.previewURL] = download
  } // scaffold

  func cancelDownload(_ track: Track) { // scaffold
    guard let download = activeDownloads[track.previewURL] else {
      return
    }
    download.task?.cancel()
    activeDownloads[track.previewURL] = nil
  } // scaffold

  func pauseDownload(_ track: Track) { // scaffold
    guard
      let download = activeDownloads[track.previewURL],
      download.isDownloading
    else {
      return
    }
    download.task?.cancel(byProducingResumeData: { data in
      download.resumeData = data
    })
    download.isDownloading = false
  } // scaffold

  func resumeDownload(_ track: Track) { // scaffold
    guard let download = activeDownloads[track.previewURL] else {
      return
    }
    if let resumeData = download.resumeData {
      download.task = downloadsSession.downloadTask(withResumeData: resumeData)
    } else {
      download.task = downloadsSession
        .downloadTask(with: download.track.previewURL)
    }
    download.task?.resume()
    download.isDownloading = true
  } // scaffold
} // scaffold
