/// A data task's use of the session's `URLCache`, by the request's cache policy and HTTP's
/// freshness rules (RFC 9111: `Cache-Control: max-age`, `no-store`, `no-cache`, `Expires`,
/// revalidation with `If-None-Match`/`If-Modified-Since`).
struct DataTaskCache {
    let cache: URLCache?
    let request: URLRequest

    init(_ cache: URLCache?, request: URLRequest) {
        self.cache = request.httpMethod ?? "GET" == "GET" ? cache : nil
        self.request = request
    }

    private var stored: CachedURLResponse? { cache?.cachedResponse(for: request) }

    /// A cached answer the policy lets the task use without asking the server.
    func usable(now: Date = Date()) -> CachedURLResponse? {
        guard let stored else { return nil }
        switch request.cachePolicy {
        case .returnCacheDataElseLoad, .returnCacheDataDontLoad: return stored
        case .useProtocolCachePolicy: return Self.isFresh(stored, now: now) ? stored : nil
        default: return nil
        }
    }

    /// Headers that ask the server whether a stale cached answer still holds.
    func conditionalHeaders() -> [(String, String)] {
        guard request.cachePolicy == .useProtocolCachePolicy, let response = stored?.response as? HTTPURLResponse else { return [] }
        var headers: [(String, String)] = []
        if let etag = response.value(forHTTPHeaderField: "ETag") { headers.append(("If-None-Match", etag)) }
        if let date = response.value(forHTTPHeaderField: "Last-Modified") { headers.append(("If-Modified-Since", date)) }
        return headers
    }

    /// The cached answer a `304 Not Modified` confirmed, stored again as fresh.
    func revalidated(by response: HTTPURLResponse) -> CachedURLResponse? {
        guard let stored, let old = stored.response as? HTTPURLResponse, let url = old.url else { return nil }
        var fields = old.allHeaderFields as? [String: String] ?? [:]
        for (name, value) in response.allHeaderFields { if let name = name as? String, let value = value as? String { fields[name] = value } }
        let renewed = HTTPURLResponse(url: url, statusCode: old.statusCode, httpVersion: "HTTP/1.1", headerFields: fields)!
        let fresh = proposal(renewed, data: stored.data)
        store(fresh)
        return fresh
    }

    func mayStore(_ response: HTTPURLResponse) -> Bool {
        guard cache != nil, response.statusCode == 200 else { return false }
        let control = (response.value(forHTTPHeaderField: "Cache-Control") ?? "").lowercased()
        return !control.contains("no-store") && !(request.value(forHTTPHeaderField: "Cache-Control") ?? "").lowercased().contains("no-store")
    }

    func proposal(_ response: HTTPURLResponse, data: Data) -> CachedURLResponse {
        CachedURLResponse(response: response, data: data, userInfo: ["FerryStoredAt": Date().timeIntervalSince1970], storagePolicy: .allowedInMemoryOnly)
    }

    func store(_ response: CachedURLResponse) {
        cache?.storeCachedResponse(response, for: request)
    }

    /// Fresh: younger than its `max-age` (or `Expires`), and not `no-cache`.
    static func isFresh(_ cached: CachedURLResponse, now: Date) -> Bool {
        guard let response = cached.response as? HTTPURLResponse, let storedAt = cached.userInfo?["FerryStoredAt"] as? Double else { return false }
        let control = (response.value(forHTTPHeaderField: "Cache-Control") ?? "").lowercased()
        if control.contains("no-cache") { return false }
        let age = now.timeIntervalSince1970 - storedAt
        if let maxAge = control.split(separator: ",").lazy.map({ $0.trimmingCharacters(in: .whitespaces) })
            .first(where: { $0.hasPrefix("max-age=") }).flatMap({ Double($0.dropFirst(8)) })
        {
            return age < maxAge
        }
        if let expires = response.value(forHTTPHeaderField: "Expires"), let date = HTTPDate.parse(expires) {
            return now < date
        }
        return false
    }
}

/// RFC 9110's date format.
enum HTTPDate {
    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
