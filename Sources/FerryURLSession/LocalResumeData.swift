/// The resume data of a download run in this process: a property list with the keys Apple's
/// resume data has (`NSURLSessionDownloadURL`, `NSURLSessionResumeBytesReceived`,
/// `NSURLSessionResumeEntityTag`, `NSURLSessionResumeServerDownloadDate`,
/// `NSURLSessionResumeInfoLocalPath`), so code that peeks into it as people do on Apple's
/// platforms finds what it expects, plus the request's headers.
struct LocalResumeData: Equatable {
    /// Marks the property lists this module wrote.
    static let version = "ferry-1"

    var url: URL
    var method: String
    var headers: [String: String]
    /// The bytes kept in ``file``.
    var bytes: Int64
    var total: Int64?
    var etag: String?
    var lastModified: String?
    /// The temporary file holding the first ``bytes`` bytes.
    var file: URL

    /// What the request carries as `If-Range`: the strong ETag, else the Last-Modified date.
    var validator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    var request: URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    func encoded() -> Data {
        var plist: [String: Any] = [
            "NSURLSessionResumeInfoVersion": Self.version,
            "NSURLSessionDownloadURL": url.absoluteString,
            "NSURLSessionResumeBytesReceived": bytes,
            "NSURLSessionResumeInfoLocalPath": file.path,
            "FerryResumeRequestMethod": method,
            "FerryResumeRequestHeaders": headers,
        ]
        if let total { plist["FerryResumeTotalBytes"] = total }
        if let etag { plist["NSURLSessionResumeEntityTag"] = etag }
        if let lastModified { plist["NSURLSessionResumeServerDownloadDate"] = lastModified }
        // A dictionary of strings and numbers always serializes.
        return try! PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
    }

    /// Reads a blob made by ``encoded()``; nil for anything else.
    init?(blob: Data) {
        guard let plist = try? PropertyListSerialization.propertyList(from: blob, options: [], format: nil) as? [String: Any],
            plist["NSURLSessionResumeInfoVersion"] as? String == Self.version,
            let url = (plist["NSURLSessionDownloadURL"] as? String).flatMap(URL.init(string:)),
            let path = plist["NSURLSessionResumeInfoLocalPath"] as? String,
            let bytes = (plist["NSURLSessionResumeBytesReceived"] as? NSNumber)?.int64Value, bytes >= 0
        else { return nil }
        self.url = url
        self.file = URL(fileURLWithPath: path)
        self.bytes = bytes
        method = plist["FerryResumeRequestMethod"] as? String ?? "GET"
        headers = plist["FerryResumeRequestHeaders"] as? [String: String] ?? [:]
        total = (plist["FerryResumeTotalBytes"] as? NSNumber)?.int64Value
        etag = plist["NSURLSessionResumeEntityTag"] as? String
        lastModified = plist["NSURLSessionResumeServerDownloadDate"] as? String
    }

    init(url: URL, method: String, headers: [String: String], bytes: Int64, total: Int64?, etag: String?, lastModified: String?, file: URL) {
        self.url = url
        self.method = method
        self.headers = headers
        self.bytes = bytes
        self.total = total
        self.etag = etag
        self.lastModified = lastModified
        self.file = file
    }
}
