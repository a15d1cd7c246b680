// Code written for Apple's platforms says `import Foundation` and finds URLSession there. On
// Linux, Foundation's URL loading lives in FoundationNetworking, and its URLSession has no
// background sessions. This module re-exports both and declares its own `URLSession`,
// `URLSessionConfiguration`, tasks and delegate protocols: a declaration in a module shadows the
// same name in a module it imports, so `import FerryURLSession` makes those names mean these,
// while `URLRequest`, `URLResponse`, `HTTPURLResponse`, `URLError`, `URLCache` and the rest stay
// FoundationNetworking's. (A file that also imports FoundationNetworking itself sees both and
// must drop that import: Porting URLSession code to Linux, in this module's documentation.)
@_exported import Foundation
@_exported import FoundationNetworking

/// The key of a cancelled download's resume data in its error's `userInfo`, as Apple names it.
public let NSURLSessionDownloadTaskResumeData = "NSURLSessionDownloadTaskResumeData"

/// The key of a cancelled upload's resume data in its error's `userInfo`, as Apple names it.
public let NSURLSessionUploadTaskResumeData = "NSURLSessionUploadTaskResumeData"

extension URLError {
    /// The resume data of a download that failed or was cancelled, when it can go on from the
    /// bytes it has: pass it to ``URLSession/downloadTask(withResumeData:)``.
    public var downloadTaskResumeData: Data? { userInfo[NSURLSessionDownloadTaskResumeData] as? Data }

    /// The resume data of an upload that failed or was cancelled, when the server can go on from
    /// its offset: pass it to ``URLSession/uploadTask(withResumeData:)``.
    public var uploadTaskResumeData: Data? { userInfo[NSURLSessionUploadTaskResumeData] as? Data }
}
