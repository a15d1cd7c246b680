import FerryURLSession

  var backgroundSessionCompletionHandler: (() -> Void)?

