import AsyncHTTPClient
import NIOCore
import NIOPosix

/// The `URLError` a failure becomes, with the codes Apple's URLSession gives for the same cause
/// and a description that says what happened.
enum URLErrorMaker {
    static func make(_ code: URLError.Code, _ url: URL?, _ description: String, resumeData: Data? = nil) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description]
        if let url {
            info[NSURLErrorFailingURLErrorKey] = url
            info[NSURLErrorFailingURLStringErrorKey] = url.absoluteString
        }
        if let resumeData { info[NSURLSessionDownloadTaskResumeData] = resumeData }
        return URLError(code, userInfo: info)
    }

    /// The error with its resume data under the key of `task`'s kind: Apple names an upload's
    /// apart from a download's.
    static func keyed(_ error: URLError, for task: URLSessionTask) -> URLError {
        guard task is URLSessionUploadTask, let data = error.userInfo[NSURLSessionDownloadTaskResumeData] else { return error }
        var info = error.userInfo
        info[NSURLSessionDownloadTaskResumeData] = nil
        info[NSURLSessionUploadTaskResumeData] = data
        return URLError(error.code, userInfo: info)
    }

    static func cancelled(_ url: URL?, resumeData: Data? = nil) -> URLError {
        make(.cancelled, url, "cancelled", resumeData: resumeData)
    }

    /// What `error` (AsyncHTTPClient's, NIO's, the file system's, a cancellation) means as a
    /// `URLError`; a `URLError` stays itself (with `resumeData` added).
    static func from(_ error: Error, url: URL?, resumeData: Data? = nil) -> URLError {
        if let error = error as? URLError {
            guard let resumeData else { return error }
            var info = error.userInfo
            info[NSURLSessionDownloadTaskResumeData] = resumeData
            return URLError(error.code, userInfo: info)
        }
        if error is CancellationError || Task.isCancelled { return cancelled(url, resumeData: resumeData) }
        let host = url?.host ?? "the server"
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled: return cancelled(url, resumeData: resumeData)
            case .connectTimeout: return make(.timedOut, url, "Connecting to \(host) timed out.", resumeData: resumeData)
            case .readTimeout, .deadlineExceeded: return make(.timedOut, url, "The request timed out.", resumeData: resumeData)
            case .remoteConnectionClosed: return make(.networkConnectionLost, url, "The network connection was lost.", resumeData: resumeData)
            case .invalidURL, .emptyHost, .emptyScheme: return make(.unsupportedURL, url, "unsupported URL", resumeData: resumeData)
            case .proxyAuthenticationRequired:
                return make(.userAuthenticationRequired, url, "The proxy refused the login (407): check connectionProxyDictionary's user and password.", resumeData: resumeData)
            case .invalidProxyResponse:
                return make(.cannotConnectToHost, url, "The proxy refused to connect to \(host): a wrong login, or a port it does not allow.", resumeData: resumeData)
            default: break
            }
        }
        let text = String(reflecting: error)
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return make(.cannotConnectToHost, url, "Could not connect to \(host): connection refused.", resumeData: resumeData)
            case ENETUNREACH, EHOSTUNREACH, ENETDOWN: return make(.notConnectedToInternet, url, "The Internet connection appears to be offline.", resumeData: resumeData)
            case ECONNRESET, EPIPE: return make(.networkConnectionLost, url, "The network connection was lost.", resumeData: resumeData)
            case ENOSPC, EDQUOT, EACCES, EROFS: return make(.cannotWriteToFile, url, "The download could not be written: \(error).", resumeData: resumeData)
            default: break
            }
        }
        if error is NIOConnectionError || text.contains("NIOConnectionError") {
            if text.contains("connectionRefused") || text.contains("Connection refused") {
                return make(.cannotConnectToHost, url, "Could not connect to \(host): connection refused.", resumeData: resumeData)
            }
            if text.contains("dns") || text.contains("DNS") || text.contains("resolve") {
                return make(.cannotFindHost, url, "A server with the specified hostname (\(host)) could not be found.", resumeData: resumeData)
            }
            if text.contains("unreachable") { return make(.notConnectedToInternet, url, "The Internet connection appears to be offline.", resumeData: resumeData) }
            return make(.cannotConnectToHost, url, "Could not connect to \(host).", resumeData: resumeData)
        }
        if text.contains("SSL") || text.contains("TLS") || text.contains("handshake") {
            if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate") {
                return make(.serverCertificateUntrusted, url, "The certificate for \(host) is not trusted (\(error)).", resumeData: resumeData)
            }
            return make(.secureConnectionFailed, url, "A TLS connection to \(host) could not be made (\(error)).", resumeData: resumeData)
        }
        if error is CocoaError || (error as NSError).domain == NSCocoaErrorDomain {
            return make(.cannotWriteToFile, url, "The download could not be written: \(error.localizedDescription)", resumeData: resumeData)
        }
        return make(.unknown, url, "\(error)", resumeData: resumeData)
    }

    /// Failures that waiting for a network can mend.
    static func waitable(_ error: URLError) -> Bool {
        [.cannotConnectToHost, .cannotFindHost, .notConnectedToInternet, .networkConnectionLost, .dnsLookupFailed].contains(error.code)
    }
}
