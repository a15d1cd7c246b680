import FerryModel
import Foundation

/// Decides whether to follow one redirect hop. Ferry follows redirects itself (not
/// AsyncHTTPClient) so that every hop is checked: http or https only, no https→http downgrade
/// unless allowed, at most `maxHops`, and no loops.
package struct RedirectPolicy: Sendable {
    package var maxHops: Int
    package var allowsDowngrade: Bool

    package init(maxHops: Int = 10, allowsDowngrade: Bool = false) {
        self.maxHops = maxHops
        self.allowsDowngrade = allowsDowngrade
    }

    package static func isRedirect(status: Int) -> Bool {
        [301, 302, 303, 307, 308].contains(status)
    }

    /// - Parameters:
    ///   - location: the `Location` header of the redirect response.
    ///   - current: the URL that answered with the redirect.
    ///   - visited: every URL requested so far in this chain, in order, starting with the first.
    /// - Returns: the URL to request next.
    package func next(location: String?, from current: URL, visited: [URL]) throws(FerryError) -> URL {
        guard let location, !location.isEmpty else {
            throw FerryError(.redirectRefused, "\(current.absoluteString) redirected without a Location header.")
        }
        guard let target = URL(string: location, relativeTo: current)?.absoluteURL else {
            throw FerryError(.redirectRefused, "\(current.absoluteString) redirected to an invalid URL '\(location.prefix(200))'.")
        }
        let scheme = target.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https", target.host?.isEmpty == false else {
            throw FerryError(
                .redirectRefused,
                "\(current.absoluteString) redirected to '\(target.absoluteString.prefix(200))'; Ferry follows only http and https redirects."
            )
        }
        if !allowsDowngrade, current.scheme?.lowercased() == "https", scheme == "http" {
            throw FerryError(
                .redirectRefused,
                "\(current.absoluteString) redirected from https to plain http (\(target.absoluteString)); Ferry refuses the downgrade."
            )
        }
        if visited.contains(where: { $0.absoluteString == target.absoluteString }) {
            throw FerryError(.tooManyRedirects, "Redirect loop: \(current.absoluteString) leads back to \(target.absoluteString).")
        }
        guard visited.count <= maxHops else {
            throw FerryError(.tooManyRedirects, "More than \(maxHops) redirects starting at \(visited[0].absoluteString).")
        }
        return target
    }
}
