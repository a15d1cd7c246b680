import FerryModel
import Foundation

/// Sessions' cookie jars as requests use them: read from the journal for each hop (a cluster's
/// members share them), changed in one transaction when a response sets cookies.
package struct SessionCookies: Sendable {
    let journal: any TransferJournal
    let now: @Sendable () -> Date

    /// The `Cookie` header for a request of `session` to `url`.
    func header(session: String, url: URL, chainSite: String?) async throws -> String? {
        let cookies = try await journal.cookies(session: session)
        guard !cookies.isEmpty else { return nil }
        return CookieJar(cookies).header(for: url, now: now(), chainSite: chainSite)
    }

    /// Keeps what a response to `url` set (`Set-Cookie` values), and forgets expired cookies.
    func receive(session: String, url: URL, _ values: [String]) async throws {
        guard !values.isEmpty else { return }
        let now = now()
        try await journal.updateCookies(session: session) { cookies in
            var jar = CookieJar(cookies)
            for value in values { jar.receive(value, from: url, now: now) }
            jar.removeExpired(now: now)
            return jar.cookies
        }
    }
}
