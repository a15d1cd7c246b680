import AsyncHTTPClient
import FerryCore
import FerryKit
import Foundation
import Logging
import NIOCore

/// Fetches a feed with a conditional GET (ETag / If-Modified-Since), following redirects with
/// the same checks as downloads, and noticing when the feed has moved for good (every hop a
/// 301 or 308).
struct FeedFetcher: Sendable {
    enum Result: Sendable {
        /// 304: nothing changed since the validators.
        case notModified
        case fetched(data: Data, etag: String?, lastModified: String?)
    }

    let clients: HTTPClients
    let redirects: RedirectPolicy
    let userAgent: String
    let maximumBytes: Int
    let timeout: Duration
    let logger: Logger

    /// - Returns: the result and, when every redirect hop was permanent, the feed's new URL.
    /// - Parameter credentials: a private feed's, sent to the feed's origin only (not to another
    ///   host a redirect leads to).
    func fetch(_ url: URL, etag: String?, lastModified: String?, credentials: FeedCredentials? = nil) async throws -> (result: Result, movedTo: URL?) {
        var headers = [("Accept", "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.5")]
        if let etag { headers.append(("If-None-Match", etag)) }
        if let lastModified { headers.append(("If-Modified-Since", lastModified)) }
        let (response, current, permanent) = try await open(url, headers: headers, credentials: credentials) { $0.feedFetchError($1) }
        let status = Int(response.status.code)
        let movedTo = permanent && current != url ? current : nil
        if status == 304 { return (.notModified, movedTo) }
        if status == 401 {
            throw FerryError(
                .feedCredentials,
                credentials == nil
                    ? "This feed needs a user name and password (\(current.host ?? "the server") asked for them): ferry podcast add URL --user NAME --password-stdin."
                    : "The feed at \(current.host ?? "the server") refused the user name and password; check them and subscribe again."
            )
        }
        guard (200...299).contains(status) else {
            throw FerryError(.feedUnavailable, "The feed at \(current.absoluteString) answered \(status) \(response.status.reasonPhrase).")
        }
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: maximumBytes)
        } catch let error as NIOTooManyBytesError {
            _ = error
            throw FerryError(.feedTooLarge, "The feed at \(current.absoluteString) is larger than \(maximumBytes / (1 << 20)) MiB.")
        } catch {
            throw AttemptFailure(error).error.feedFetchError(current)
        }
        return (
            .fetched(data: Data(body.readableBytesView), etag: response.headers.first(name: "ETag"), lastModified: response.headers.first(name: "Last-Modified")),
            movedTo
        )
    }

    /// A GET that follows redirects with the same checks as downloads, the credentials going only
    /// to the first URL's origin: as the answer to its challenge (Basic or Digest, the strongest
    /// it offers), never as a Basic header it did not ask for.
    /// - Parameter failed: the error for a request that could not be made, and the URL it was to.
    /// - Returns: the first answer that is not a redirect (its body unread, the caller's), the URL
    ///   that gave it, and whether every hop on the way was permanent (301, 308).
    func open(
        _ url: URL, headers: [(String, String)] = [], credentials: FeedCredentials? = nil, failed: (FerryError, URL) -> FerryError
    ) async throws -> (response: HTTPClientResponse, url: URL, permanent: Bool) {
        var current = url
        var visited = [url]
        var permanent = true
        let auth = credentials.map {
            Authenticator(lookup: CredentialLookup(url: url, options: TransferOptions(user: $0.user, password: $0.password)))
        }
        var authorization: String?
        var round = 0
        while true {
            var request = HTTPClientRequest(url: current.absoluteString)
            request.headers.add(name: "User-Agent", value: userAgent)
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if let authorization { request.headers.add(name: "Authorization", value: authorization) }
            let response: HTTPClientResponse
            do {
                response = try await clients.client(for: current).execute(request, timeout: .init(timeout), logger: logger)
            } catch {
                throw failed(AttemptFailure(error).error, current)
            }
            if response.status == .unauthorized, let auth {
                let answer: String?
                do {
                    answer = try await auth.answer(challenges: response.headers["WWW-Authenticate"], url: current, round: round)
                } catch let error as FerryError where error.code == .authenticationFailed {
                    // Refused: the 401 stands, and its caller says so; a challenge Ferry cannot answer says why.
                    if round > 0 { return (response, current, permanent) }
                    throw FerryError(.feedCredentials, error.message)
                }
                if let answer {
                    _ = try? await response.body.collect(upTo: 64 * 1024)
                    authorization = answer
                    round += 1
                    continue
                }
            }
            let status = Int(response.status.code)
            guard RedirectPolicy.isRedirect(status: status) else { return (response, current, permanent) }
            permanent = permanent && (status == 301 || status == 308)
            let next = try redirects.next(location: response.headers.first(name: "Location"), from: current, visited: visited)
            _ = try? await response.body.collect(upTo: 64 * 1024)
            visited.append(next)
            current = next
            authorization = auth?.preemptive(for: current)
            round = 0
        }
    }
}

extension FerryError {
    /// A transfer-style error (timeout, connection) reworded for a feed.
    func feedFetchError(_ url: URL) -> FerryError {
        FerryError(.feedUnavailable, "Could not fetch the feed at \(url.absoluteString): \(message)")
    }
}
