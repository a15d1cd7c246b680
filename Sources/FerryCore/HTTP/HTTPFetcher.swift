import AsyncHTTPClient
import FerryKit
import Foundation
import Logging
import NIOCore

/// GET with Ferry's own redirect handling (see ``RedirectPolicy``): every hop is checked
/// before it is requested, and the same headers go to every hop.
struct HTTPFetcher: Sendable {
    let http: HTTPClient
    let redirects: RedirectPolicy
    let userAgent: String
    let logger: Logger

    /// - Returns: the first non-redirect response and the URL that gave it.
    func get(_ url: URL, headers: [(name: String, value: String)]) async throws -> (response: HTTPClientResponse, url: URL) {
        var current = url
        var visited = [url]
        while true {
            var request = HTTPClientRequest(url: current.absoluteString)
            request.headers.add(name: "User-Agent", value: userAgent)
            request.headers.add(name: "Accept-Encoding", value: "identity")
            for header in headers { request.headers.add(name: header.name, value: header.value) }
            let response = try await http.execute(request, deadline: .distantFuture, logger: logger)
            guard RedirectPolicy.isRedirect(status: Int(response.status.code)) else { return (response, current) }
            let next = try redirects.next(location: response.headers.first(name: "Location"), from: current, visited: visited)
            logger.debug("redirect", metadata: ["http.from": "\(current)", "http.to": "\(next)"])
            _ = try? await response.body.collect(upTo: 64 * 1024)
            visited.append(next)
            current = next
        }
    }
}

/// A response status that is neither success nor redirect.
struct HTTPStatusFailure: Error {
    var status: Int
    var reason: String
    var url: URL
    var retryAfter: String?
}
